// Loading the CUDA driver at run time: a missing driver is a clean Status
// naming the library, never a failure to start (this binary does not link
// libcuda.so.1; it runs on machines without one).
#include <gtest/gtest.h>

#include "core/backends/cuda/cuda_driver.h"
#include "core/backends/cuda/cuda_executable.h"
#include "core/backends/cuda/cupti_tracer.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

TEST(CudaDriverTest, MissingLibraryIsReportedByName) {
  absl::StatusOr<const CudaDriver*> d = CudaDriver::LoadFrom("libpasslab-no-such-driver.so.1");
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(absl::IsUnavailable(d.status()));
  EXPECT_EQ(d.status().message(), "no CUDA driver (libpasslab-no-such-driver.so.1 not found)");
}

TEST(CudaDriverTest, LibraryWithoutTheEntryPointsIsRejected) {
  // libc has none of the driver's entry points.
  absl::StatusOr<const CudaDriver*> d = CudaDriver::LoadFrom("libc.so.6");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("lacks cuInit"), std::string::npos) << d.status();
}

TEST(CudaDriverTest, ProcessDriverIsPresentOrCleanlyAbsent) {
  absl::StatusOr<const CudaDriver*> d = CudaDriver::Get();
  absl::StatusOr<std::string> device = DescribeCudaDevice(0);
  if (d.ok()) {
    if (!device.ok()) {
      EXPECT_TRUE(absl::IsUnavailable(device.status())) << device.status();
      EXPECT_NE(device.status().message().find("no CUDA device"), std::string::npos) << device.status();
      return;
    }
    EXPECT_EQ(device->rfind("cuda:0 (", 0), 0u) << *device;
    return;
  }
  // No driver here: every entry point says so the same way.
  EXPECT_TRUE(d.status().message() == "no CUDA driver (libcuda.so.1 not found)" ||
              d.status().message().find("no CUDA device") != std::string::npos)
      << d.status();
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().message(), d.status().message());
  EXPECT_FALSE(CuptiTracer::Get().ok());
}

TEST(CudaDriverTest, ErrorsNameTheCallAndTheResult) {
  absl::StatusOr<const CudaDriver*> d = CudaDriver::Get();
  if (!d.ok()) GTEST_SKIP() << "needs the CUDA driver for cuGetErrorName: " << d.status().message();
  absl::Status s = (*d)->Check(CUDA_ERROR_INVALID_PTX, "cuModuleLoadData(fusion.3)");
  EXPECT_EQ(s.message(), "cuModuleLoadData(fusion.3): CUDA_ERROR_INVALID_PTX");
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_TRUE((*d)->Check(CUDA_SUCCESS, "cuInit").ok());
  EXPECT_TRUE(absl::IsResourceExhausted((*d)->Check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc")));
}

TEST(CudaDriverTest, ExecutableCreationFailsCleanlyWithoutADevice) {
  if (DescribeCudaDevice(0).ok()) GTEST_SKIP() << "a CUDA device is present (covered by cuda_executable_test)";
  absl::StatusOr<std::unique_ptr<HloModule>> m =
      ParseHloModule("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<std::unique_ptr<CudaExecutable>> e = CudaExecutable::Create(**m, nullptr);
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::IsUnavailable(e.status())) << e.status();
  EXPECT_EQ(e.status().message(), DescribeCudaDevice(0).status().message());
}

}  // namespace
}  // namespace passlab
