/* The broker's heap on transparent huge pages: glibc's malloc asks for them (madvise) when its
 * tunable glibc.malloc.hugetlb=1 is set, and reads its tunables only from the environment at
 * exec, so `serve` sets it and executes itself again, once, before anything else.
 *
 * Why: a broker's heap is mostly long-lived per-partition state (log, replica, Raft: about
 * 4 KiB a partition), touched for the first time at a restart. In 4 KiB pages a restart of
 * 50,000 partitions took 70,000 page faults, a quarter of its CPU on this project's VMs; in
 * 2 MiB pages, 17,000. RSS grows by a few MiB at most (the heap's last huge page).
 *
 * Left alone when the environment already names the tunable (glibc.malloc.hugetlb=0 opts out),
 * when the kernel's transparent huge pages are "never", and under valgrind (its preload would
 * not survive the exec). A failed exec goes on in this process, as before. */
#ifndef SP_SERVER_HUGE_PAGES_H
#define SP_SERVER_HUGE_PAGES_H

/* Returns only when it did not exec (argv as main got it, argv[argc] == NULL). */
void huge_pages_exec(char **argv);

#endif
