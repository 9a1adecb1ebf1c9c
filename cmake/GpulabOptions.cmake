# Resolves the AUTO/ON/OFF feature options and prints one line per option saying why.
# ON fails loudly when the feature cannot be built; AUTO turns it off with the reason.

function(_gpulab_report name enabled reason)
  if(enabled)
    message(STATUS "gpulab: ${name} ON (${reason})")
  else()
    message(STATUS "gpulab: ${name} OFF (${reason})")
  endif()
endfunction()

function(_gpulab_unavailable name reason)
  if(${name} STREQUAL "ON")
    message(FATAL_ERROR "gpulab: ${name}=ON but ${reason}")
  endif()
  set(${name}_ENABLED OFF PARENT_SCOPE)
  if(${name} STREQUAL "OFF")
    _gpulab_report(${name} OFF "disabled with -D${name}=OFF")
  else()
    _gpulab_report(${name} OFF "${reason}")
  endif()
endfunction()

# Sets GPULAB_CUDA_ENABLED, and for the programs (engine/base/cuda_build.hpp.in)
# GPULAB_CUDA_TOOLKIT_VERSION (nvcc's) or GPULAB_NO_CUDA_REASON (why there is no CUDA backend).
macro(gpulab_resolve_cuda)
  set(GPULAB_CUDA_ENABLED OFF)
  set(GPULAB_CUDA_TOOLKIT_VERSION "")
  set(GPULAB_NO_CUDA_REASON "")
  if(GPULAB_CUDA STREQUAL "OFF")
    set(GPULAB_NO_CUDA_REASON "built without CUDA (GPULAB_CUDA=OFF)")
    _gpulab_unavailable(GPULAB_CUDA "")
  else()
    # check_language caches a compiler it did not find, and would not look again after the toolkit
    # is installed: forget that, so the next configure finds it.
    if(DEFINED CACHE{CMAKE_CUDA_COMPILER} AND NOT CMAKE_CUDA_COMPILER)
      unset(CMAKE_CUDA_COMPILER CACHE)
    endif()
    if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        # With a GPU present, code for that GPU alone. Without one (a build machine, CI), one
        # architecture: sm_75 code and compute_75 PTX, which the driver compiles for any newer GPU
        # on first use; building five architectures took twice as long and none of them can run here.
        execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _gpulab_smi_rc
          OUTPUT_QUIET ERROR_QUIET TIMEOUT 20)
        if(_gpulab_smi_rc EQUAL 0)
          set(CMAKE_CUDA_ARCHITECTURES native)
        else()
          set(CMAKE_CUDA_ARCHITECTURES 75)
        endif()
      endif()
      enable_language(CUDA)
      find_package(CUDAToolkit REQUIRED)
      set(GPULAB_CUDA_ENABLED ON)
      set(GPULAB_CUDA_TOOLKIT_VERSION "${CMAKE_CUDA_COMPILER_VERSION}")
      _gpulab_report(GPULAB_CUDA ON "nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
    else()
      set(GPULAB_NO_CUDA_REASON "nvcc was not found when gpulab was built")
      _gpulab_unavailable(GPULAB_CUDA "no CUDA compiler (nvcc) found")
    endif()
  endif()
  _gpulab_report_driver()
endmacro()

# One line on the NVIDIA driver beside the CUDA line: its version and the CUDA it supports, or that
# there is none; a warning where the driver's CUDA is older than the toolkit's major release (the
# programs would refuse the GPU), or where a driver waits for a toolkit.
function(_gpulab_report_driver)
  execute_process(COMMAND nvidia-smi RESULT_VARIABLE smi_rc OUTPUT_VARIABLE smi
    ERROR_QUIET TIMEOUT 20)
  if(NOT smi_rc EQUAL 0 OR NOT smi MATCHES "Driver Version: ([0-9.]+)")
    message(STATUS "gpulab: NVIDIA driver: none here (nvidia-smi found none); the programs build "
      "and say \"no GPU\" until one is installed")
    return()
  endif()
  set(driver "${CMAKE_MATCH_1}")
  set(driver_cuda "")
  if(smi MATCHES "CUDA Version: ([0-9]+\\.[0-9]+)")
    set(driver_cuda "${CMAKE_MATCH_1}")
  endif()
  message(STATUS "gpulab: NVIDIA driver ${driver} (supports CUDA ${driver_cuda})")
  if(GPULAB_CUDA_ENABLED AND driver_cuda)
    string(REGEX MATCH "^[0-9]+" nvcc_major "${CMAKE_CUDA_COMPILER_VERSION}")
    string(REGEX MATCH "^[0-9]+" driver_major "${driver_cuda}")
    if(driver_major LESS nvcc_major)
      message(WARNING "gpulab: the NVIDIA driver ${driver} supports CUDA up to ${driver_cuda}, "
        "older than nvcc ${CMAKE_CUDA_COMPILER_VERSION}: the programs will refuse the GPU. Update "
        "the driver, or configure with a CUDA ${driver_cuda} toolkit (-DCMAKE_CUDA_COMPILER=...)")
    endif()
  elseif(NOT GPULAB_CUDA_ENABLED)
    message(STATUS "gpulab: the driver is here but not the CUDA backend (${GPULAB_NO_CUDA_REASON}): "
      "gpulab-cli devices says what to install for GPU training")
  endif()
endfunction()

# NCCL is needed at build time for nccl.h alone: engine/cuda/nccl.cpp loads libnccl.so.2 at run time
# (never linked), from the loader's path (LD_LIBRARY_PATH, the system's library folders).
# GPULAB_NCCL_ROOT (a -D or an environment variable) names a folder with include/nccl.h and
# lib/libnccl.so.2 that is not under the CUDA toolkit, such as the nvidia-nccl-cu13 Python wheel's
# site-packages/nvidia/nccl; scripts/gpu-check passes it.
macro(gpulab_resolve_nccl)
  set(GPULAB_NCCL_ENABLED OFF)
  if(NOT GPULAB_NCCL_ROOT AND DEFINED ENV{GPULAB_NCCL_ROOT})
    set(GPULAB_NCCL_ROOT "$ENV{GPULAB_NCCL_ROOT}")
  endif()
  if(GPULAB_NCCL STREQUAL "OFF")
    _gpulab_unavailable(GPULAB_NCCL "")
  elseif(NOT GPULAB_CUDA_ENABLED)
    _gpulab_unavailable(GPULAB_NCCL "the CUDA backend is off")
  elseif(GPULAB_NCCL_ROOT AND NOT EXISTS "${GPULAB_NCCL_ROOT}/include/nccl.h")
    # A root that was named but holds no header is a mistake to report, not to search past.
    _gpulab_unavailable(GPULAB_NCCL "GPULAB_NCCL_ROOT=${GPULAB_NCCL_ROOT} has no include/nccl.h")
  else()
    if(GPULAB_NCCL_ROOT)
      # The named root wins over any other nccl.h (a libnccl-dev in /usr/include, say).
      set(GPULAB_NCCL_INCLUDE "${GPULAB_NCCL_ROOT}/include" CACHE PATH "the folder of nccl.h" FORCE)
      find_library(GPULAB_NCCL_LIBRARY NAMES nccl libnccl.so.2 PATHS ${GPULAB_NCCL_ROOT}/lib
        NO_DEFAULT_PATH)
    endif()
    find_path(GPULAB_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    # Only to say where the run-time library is; the build does not need it.
    find_library(GPULAB_NCCL_LIBRARY NAMES nccl libnccl.so.2
      HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
    if(GPULAB_NCCL_INCLUDE)
      set(GPULAB_NCCL_ENABLED ON)
      if(GPULAB_NCCL_LIBRARY)
        set(_gpulab_nccl_library "loaded at run time; ${GPULAB_NCCL_LIBRARY} found now")
      else()
        set(_gpulab_nccl_library "loaded at run time; no libnccl.so.2 found now: put its folder on LD_LIBRARY_PATH")
      endif()
      _gpulab_report(GPULAB_NCCL ON "${GPULAB_NCCL_INCLUDE}/nccl.h; ${_gpulab_nccl_library}")
    else()
      _gpulab_unavailable(GPULAB_NCCL "nccl.h not found (set GPULAB_NCCL_ROOT to the folder holding include/nccl.h)")
    endif()
  endif()
endmacro()

macro(gpulab_resolve_mpi)
  set(GPULAB_MPI_ENABLED OFF)
  if(GPULAB_MPI STREQUAL "OFF")
    _gpulab_unavailable(GPULAB_MPI "")
  else()
    find_package(MPI QUIET COMPONENTS CXX)
    if(MPI_CXX_FOUND)
      set(GPULAB_MPI_ENABLED ON)
      _gpulab_report(GPULAB_MPI ON "MPI ${MPI_CXX_VERSION}")
    else()
      _gpulab_unavailable(GPULAB_MPI "no MPI found (install libopenmpi-dev)")
    endif()
  endif()
endmacro()

macro(gpulab_resolve_gui)
  set(GPULAB_GUI_ENABLED OFF)
  if(GPULAB_GUI STREQUAL "OFF")
    _gpulab_unavailable(GPULAB_GUI "")
  else()
    find_package(Qt6 QUIET COMPONENTS Widgets PrintSupport Svg Network Test)
    find_package(QCustomPlotQt6 QUIET)
    if(Qt6_FOUND AND QCustomPlotQt6_FOUND)
      set(GPULAB_GUI_ENABLED ON)
      _gpulab_report(GPULAB_GUI ON "Qt ${Qt6_VERSION} and QCustomPlot for Qt 6")
    elseif(NOT Qt6_FOUND)
      _gpulab_unavailable(GPULAB_GUI "Qt 6 Widgets/Svg not found (install qt6-base-dev qt6-svg-dev)")
    else()
      _gpulab_unavailable(GPULAB_GUI "QCustomPlot for Qt 6 not found (install libqcustomplot-dev)")
    endif()
  endif()
endmacro()
