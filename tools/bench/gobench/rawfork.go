package main

/*
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// The time of one fork() + execve("/bin/true") + waitpid() from C, as
// libuv spawns: what the fork alone costs this process, planctl aside.
static int64_t raw_fork_ns(void)
{
	struct timespec t0, t1;
	char *argv[] = {"true", NULL};
	char *envp[] = {NULL};
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		execve("/bin/true", argv, envp);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 +
	       (t1.tv_nsec - t0.tv_nsec);
}
*/
import "C"

import "time"

// rawFork returns the median of n fork+exec+wait from C.
func rawFork(n int) time.Duration {
	xs := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		ns := C.raw_fork_ns()
		if ns < 0 {
			return -1
		}
		xs = append(xs, float64(ns))
	}
	return time.Duration(median(xs))
}
