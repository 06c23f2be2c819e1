#include "gui/state/job.h"

namespace passlab::gui {
namespace {

std::mutex& InFlightMutex() {
  static std::mutex mu;
  return mu;
}
std::condition_variable& InFlightCv() {
  static std::condition_variable cv;
  return cv;
}
int64_t in_flight = 0;

}  // namespace

namespace internal {
void JobStarted() {
  std::lock_guard<std::mutex> lock(InFlightMutex());
  ++in_flight;
}
void JobFinished() {
  {
    std::lock_guard<std::mutex> lock(InFlightMutex());
    --in_flight;
  }
  InFlightCv().notify_all();
}
}  // namespace internal

int64_t JobsInFlight() {
  std::lock_guard<std::mutex> lock(InFlightMutex());
  return in_flight;
}

bool WaitForAllJobs(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(InFlightMutex());
  return InFlightCv().wait_for(lock, timeout, [] { return in_flight == 0; });
}

}  // namespace passlab::gui
