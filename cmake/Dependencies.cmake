# Every dependency is a Debian package (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(absl REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG)
find_package(nlohmann_json 3.10 REQUIRED CONFIG)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED CONFIG)
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# KissFFT (libkissfft-dev): the runtime's fft routine uses its C++ template
# (kissfft.hh, float and double); the package's .pc names the float build.
pkg_check_modules(KISSFFT REQUIRED IMPORTED_TARGET kissfft-float)
find_path(DTL_INCLUDE_DIR dtl/dtl.hpp REQUIRED)
add_library(passlab_dtl INTERFACE)
# oneDNN 2.6 (v2 API) and OpenBLAS 0.3 (config gives variables only) for the
# CPU runtime's library calls.
# Debian's dnnl-config.cmake also asks for OpenCL (its GPU runtime); where
# the OpenCL headers are missing, the library and header are found directly.
find_package(OpenCL QUIET)
if(OpenCL_FOUND)
  find_package(dnnl 2.6 REQUIRED CONFIG)
endif()
if(NOT TARGET DNNL::dnnl)
  find_library(DNNL_LIBRARY dnnl REQUIRED)
  find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
  add_library(DNNL::dnnl UNKNOWN IMPORTED)
  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION ${DNNL_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${DNNL_INCLUDE_DIR})
  message(STATUS "passlab: oneDNN found directly: ${DNNL_LIBRARY}")
endif()
find_package(OpenBLAS REQUIRED CONFIG)
add_library(passlab_openblas INTERFACE)
target_include_directories(passlab_openblas SYSTEM INTERFACE ${OpenBLAS_INCLUDE_DIRS})
target_link_libraries(passlab_openblas INTERFACE ${OpenBLAS_LIBRARIES})
target_include_directories(passlab_dtl SYSTEM INTERFACE ${DTL_INCLUDE_DIR})

if(PASSLAB_WITH_MLIR)
  # MLIR/LLVM 22 from Debian (llvm-22-dev libmlir-22-dev mlir-22-tools). Only
  # core/codegen and core/runtime may link these targets.
  find_package(MLIR 22.1 REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)
  message(STATUS "passlab: MLIR ${MLIR_VERSION} / LLVM ${LLVM_PACKAGE_VERSION}")
endif()

if(PASSLAB_WITH_CUDA)
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    message(STATUS "passlab: CUDA toolkit ${CUDAToolkit_VERSION} found (for the CUDA backend)")
  else()
    message(STATUS "passlab: CUDA toolkit not found; the CUDA backend will be skipped")
  endif()
endif()

if(PASSLAB_WITH_GUI)
  # Dear ImGui 1.86 (static, with the GLFW/OpenGL3 backends) + GLFW 3.3; only
  # gui/ may link them. Missing packages skip the GUI with a message.
  pkg_check_modules(IMGUI QUIET IMPORTED_TARGET imgui)
  find_package(glfw3 3.3 QUIET CONFIG)
  set(OpenGL_GL_PREFERENCE GLVND)
  find_package(OpenGL QUIET)
  if(IMGUI_FOUND AND glfw3_FOUND AND OpenGL_FOUND)
    set(PASSLAB_HAVE_GUI ON)
    message(STATUS "passlab: Dear ImGui ${IMGUI_VERSION} + GLFW found (passlab-gui can be built)")
  else()
    set(PASSLAB_HAVE_GUI OFF)
    message(STATUS "passlab: Dear ImGui/GLFW/OpenGL not found; the GUI is skipped")
  endif()
endif()
