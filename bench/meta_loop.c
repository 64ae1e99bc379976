/*
 * meta_loop: the "physical limit" for fsarena's metadata hot path.
 *
 * A bare loop over N empty files in one directory, in three timed passes:
 *   create  openat(dirfd, name, O_CREAT|O_EXCL|O_WRONLY|O_CLOEXEC, 0664) + close
 *   stat    fstatat(dirfd, name, &st, 0)
 *   remove  unlinkat(dirfd, name, 0)
 * Names are mdtest's (file.mdtest.0.<i>), built in place in a fixed buffer; the
 * directory is opened once and every call is relative to it (no path walk per
 * operation). One clock_gettime(CLOCK_MONOTONIC) per operation: latency = now -
 * previous. It keeps only an op count and a latency sum: no histogram, no
 * barriers, no error reporting beyond the first failure. fsarena's
 * `meta:items=N,files_only=1,tasks=1` does the same operations in the same order.
 *
 * usage: meta_loop DIR N
 *   DIR  an existing, empty directory (the files are created in it and removed)
 *   N    number of files
 *
 * output (one line per pass):
 *   create ops=<n> secs=<float> rate=<float> lat_mean_ns=<float>
 *   stat ...
 *   remove ...
 *
 * build: cc -O2 -o meta_loop meta_loop.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "file.mdtest.0." followed by i and a NUL, written over the buffer's tail. */
#define PREFIX "file.mdtest.0."
static char name[64] = PREFIX;

static inline const char *name_of(uint64_t i)
{
	char digits[24];
	int n = 0;
	do {
		digits[n++] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	char *p = name + sizeof(PREFIX) - 1;
	while (n)
		*p++ = digits[--n];
	*p = 0;
	return name;
}

enum pass { CREATE, STAT, REMOVE };
static const char *pass_name[] = { "create", "stat", "remove" };

static void run(int dirfd, uint64_t n, enum pass pass)
{
	struct stat st;
	uint64_t start = now_ns(), prev = start, lat_sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		const char *f = name_of(i);
		int rc;
		switch (pass) {
		case CREATE:
			rc = openat(dirfd, f, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0664);
			if (rc >= 0)
				rc = close(rc);
			break;
		case STAT:
			rc = fstatat(dirfd, f, &st, 0);
			break;
		default:
			rc = unlinkat(dirfd, f, 0);
			break;
		}
		uint64_t now = now_ns();
		if (rc < 0) {
			fprintf(stderr, "meta_loop: %s %s: %s\n", pass_name[pass], f, strerror(errno));
			exit(1);
		}
		lat_sum += now - prev;
		prev = now;
	}
	double secs = (double)(prev - start) / 1e9;
	printf("%s ops=%llu secs=%.6f rate=%.1f lat_mean_ns=%.1f\n", pass_name[pass], (unsigned long long)n, secs,
	       secs > 0 ? (double)n / secs : 0.0, n ? (double)lat_sum / (double)n : 0.0);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: meta_loop DIR N\n");
		return 2;
	}
	char *end;
	errno = 0;
	unsigned long long n = strtoull(argv[2], &end, 10);
	if (errno || end == argv[2] || *end) {
		fprintf(stderr, "meta_loop: bad N '%s' (want a plain integer)\n", argv[2]);
		return 2;
	}
	int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "meta_loop: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	run(dirfd, n, CREATE);
	run(dirfd, n, STAT);
	run(dirfd, n, REMOVE);
	return 0;
}
