// NCCL, loaded at run time as libnccl.so.2 and never linked, as NVML is: a binary starts where
// NCCL (or the driver) is missing and says so when several GPUs are asked for. Built only when
// nccl.h was found (GPULAB_NCCL).
#pragma once

#include <nccl.h>

#include <string>

namespace gpulab {

struct NcclApi {
  decltype(&ncclCommInitAll) comm_init_all;
  decltype(&ncclCommDestroy) comm_destroy;
  decltype(&ncclCommAbort) comm_abort;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  decltype(&ncclGetErrorString) error_string;
  // Across processes (GPU ranks under MPI): rank 0 makes the id, MPI carries it to the others.
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) comm_init_rank;
  decltype(&ncclCommGetAsyncError) comm_get_async_error;
  int version = 0;  // ncclGetVersion's: 22703 for 2.27.3
};

// The process's NCCL, loaded on first use and kept to the end (NCCL is never unloaded); null
// with *why ("libnccl.so.2 is not installed", a missing function) when it cannot be used.
const NcclApi* load_nccl(std::string* why);

}  // namespace gpulab

// Checks an NCCL call made through the table, with the library's own text for the error.
#define GPULAB_NCCL_API_CHECK(api, expr) \
  ::gpulab::kernels::cuda::check_nccl((expr), (api).error_string, #expr, __FILE__, __LINE__)
