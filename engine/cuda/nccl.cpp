// Looking NCCL up with dlopen and dlsym, once per process.
#include "engine/cuda/nccl.hpp"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace gpulab {

const NcclApi* load_nccl(std::string* why) {
  static std::once_flag once;
  static NcclApi api;
  static const NcclApi* loaded = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    constexpr const char* kLibrary = "libnccl.so.2";
    void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      reason = std::string("NCCL is not installed (") + kLibrary + " could not be loaded)";
      return;
    }
    std::string missing;
    auto bind = [&](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
      if (!slot) missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    bind(api.comm_init_all, "ncclCommInitAll");
    bind(api.comm_destroy, "ncclCommDestroy");
    bind(api.comm_abort, "ncclCommAbort");
    bind(api.all_reduce, "ncclAllReduce");
    bind(api.group_start, "ncclGroupStart");
    bind(api.group_end, "ncclGroupEnd");
    bind(api.error_string, "ncclGetErrorString");
    bind(api.get_unique_id, "ncclGetUniqueId");
    bind(api.comm_init_rank, "ncclCommInitRank");
    bind(api.comm_get_async_error, "ncclCommGetAsyncError");
    decltype(&ncclGetVersion) get_version = nullptr;
    bind(get_version, "ncclGetVersion");
    if (!missing.empty()) {
      reason = std::string(kLibrary) + " lacks " + missing;
      return;  // the handle stays open: a library that was loaded is never unloaded
    }
    get_version(&api.version);
    loaded = &api;
  });
  if (!loaded && why) *why = reason;
  return loaded;
}

}  // namespace gpulab
