#pragma once
// A process-wide allocator setting for programs that train or evaluate.
//
// Every training step and every evaluation batch allocates and frees the same
// multi-megabyte activation tensors. By default glibc serves blocks that large
// with mmap and returns them with munmap, so each step faults every page in
// again and the kernel zero-fills it: on LeNet-5 that costs more than the
// arithmetic (inference of 256 digits: about 48 ms with it, 12 ms without).
namespace nodeflow::training {

/// Keeps freed blocks in the heap for reuse, whatever their size (glibc's
/// M_MMAP_THRESHOLD at 32 MiB, M_MMAP_MAX at 0, M_TRIM_THRESHOLD at 256 MiB). Affects the
/// whole process, so it is for programs (nodeflow train/eval, benchmarks), not
/// for library code. Returns false where the C library has no such setting.
bool keep_freed_buffers_in_heap();

}  // namespace nodeflow::training
