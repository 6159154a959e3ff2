// The allocator settings of the pipesim executable, where the build links jemalloc
// (PIPESIM_JEMALLOC, CMakeLists.txt). The libraries, the tests and the Python module use the
// C library's malloc.
//
// Why: a big schedule's op lists, dependency arrays and output buffers are hundreds of MiB
// of fresh memory, and the first touch of each 4 KiB page is a page fault, which costs
// 10-20 us on a virtual machine. On the 2-core VM of docs/performance.md (issue 19, part 6),
// `schedule --format text` at p=128 m=8192 spent most of its 0.84 s in the kernel's fault
// path (46 400 faults). Debian's default transparent-huge-page mode is "madvise": huge pages
// only where a program asks. The engine's own arrays ask (sim/buffer.hpp), wherever they
// run; glibc's malloc asks only under GLIBC_TUNABLES=glibc.malloc.hugetlb=1, and even then
// not for the many blocks under 2 MiB (one op list per device). jemalloc with thp:always asks
// for all of its memory and packs small blocks into the huge pages, so a first touch maps
// 2 MiB. Measured there, paired: `check` 899 -> 222 ms, `schedule --format text` 840 -> 205
// ms, csv 199 -> 79 ms, `simulate --json` p=128 m=2048 59 -> 40 ms; 12-35 % more peak
// resident memory (tools/memory_guard.hpp counts it).
//
// Freed memory is kept for reuse (dirty_decay_ms:-1, muzzy_decay_ms:-1), as a training
// framework's caching allocator keeps it: by default jemalloc hands freed pages back to the
// system over ten seconds, starting at once, and the executor then faults them in again.
// On the 2-vCPU VM of docs/validation/cpu-history.md, Chimera's gradient exchange (a 27 MB copy per
// replica per iteration on gpt-small) waited 10-90 ms per sync for fresh pages, and its
// iteration took 1.293 s instead of 1.201 s (prediction 1.163 s). The process's peak
// resident memory is the same; it just does not shrink before the process ends.
//
// jemalloc reads this symbol at its start; MALLOC_CONF in the environment still overrides
// it (MALLOC_CONF=thp:default turns the huge pages off). Where the kernel has no THP, or
// its mode is "never", the advice does nothing. `pipesim --version` says what is in use.
extern "C" {
[[gnu::visibility("default"), gnu::used]] const char* malloc_conf = "thp:always,dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
