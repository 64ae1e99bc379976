/*
 * pread_loop: the "physical limit" for fsarena's I/O hot path.
 *
 * A bare loop of pread(2)/pwrite(2) calls with nothing else in it: one
 * clock_gettime(CLOCK_MONOTONIC) per op (latency = now - previous), a running
 * op count and a running latency sum. No histogram, no random map, no
 * per-interval samples. fio and fsarena are measured against this.
 *
 * usage: pread_loop FILE SIZE_BYTES BS MODE SECONDS [DIRECT] [MAX_OPS]
 *   MODE     randread | read | randwrite | write
 *   SECONDS  run time (may be fractional); 0 = no time limit (needs MAX_OPS)
 *   DIRECT   1 = open with O_DIRECT (default 0)
 *   MAX_OPS  stop after this many ops (default 0 = unlimited)
 *
 * Offsets are block-aligned (multiples of BS) within [0, SIZE_BYTES - BS];
 * random modes draw them uniformly with xorshift64*, sequential modes wrap
 * around at the end of the file. If the file is shorter than SIZE_BYTES it is
 * laid out (written) before the timed loop starts.
 *
 * output (one line): iops=<float> bw_bytes=<float> ops=<n> [lat_mean_ns=<float>]
 *
 * build: cc -O2 -o pread_loop pread_loop.c
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

static void die(const char *what)
{
	fprintf(stderr, "pread_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pread_loop FILE SIZE_BYTES BS MODE(randread|read|randwrite|write) SECONDS [DIRECT(0|1)] [MAX_OPS]\n");
	exit(2);
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64* (Vigna) */
static inline uint64_t xs_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end != '\0') {
		fprintf(stderr, "pread_loop: bad %s '%s' (want a plain integer)\n", what, s);
		exit(2);
	}
	return (uint64_t)v;
}

int main(int argc, char **argv)
{
	if (argc < 6 || argc > 8)
		usage();

	const char *path = argv[1];
	uint64_t size = parse_u64(argv[2], "SIZE_BYTES");
	uint64_t bs = parse_u64(argv[3], "BS");
	const char *mode = argv[4];
	char *end;
	double seconds = strtod(argv[5], &end);
	if (end == argv[5] || *end != '\0' || seconds < 0) {
		fprintf(stderr, "pread_loop: bad SECONDS '%s'\n", argv[5]);
		exit(2);
	}
	int direct = argc > 6 ? (int)parse_u64(argv[6], "DIRECT") : 0;
	uint64_t max_ops = argc > 7 ? parse_u64(argv[7], "MAX_OPS") : 0;

	int is_write, is_rand;
	if (!strcmp(mode, "randread")) {
		is_write = 0; is_rand = 1;
	} else if (!strcmp(mode, "read")) {
		is_write = 0; is_rand = 0;
	} else if (!strcmp(mode, "randwrite")) {
		is_write = 1; is_rand = 1;
	} else if (!strcmp(mode, "write")) {
		is_write = 1; is_rand = 0;
	} else {
		fprintf(stderr, "pread_loop: bad MODE '%s' (randread|read|randwrite|write)\n", mode);
		exit(2);
	}
	if (bs == 0 || size < bs) {
		fprintf(stderr, "pread_loop: need 0 < BS <= SIZE_BYTES\n");
		exit(2);
	}
	if (seconds == 0 && max_ops == 0) {
		fprintf(stderr, "pread_loop: SECONDS=0 needs MAX_OPS > 0\n");
		exit(2);
	}
	const uint64_t nblocks = size / bs;

	void *buf;
	size_t align = 4096;
	if (posix_memalign(&buf, align, bs))
		die("posix_memalign");
	memset(buf, 0xa5, bs);

	/* Lay out the file (untimed) if it is missing or short. */
	{
		int lfd = open(path, O_RDWR | O_CREAT, 0644);
		if (lfd < 0)
			die(path);
		struct stat st;
		if (fstat(lfd, &st))
			die("fstat");
		if ((uint64_t)st.st_size < nblocks * bs) {
			for (uint64_t off = 0; off < nblocks * bs; off += bs)
				if (pwrite(lfd, buf, bs, (off_t)off) != (ssize_t)bs)
					die("layout pwrite");
			if (fsync(lfd))
				die("fsync");
		}
		close(lfd);
	}

	int flags = is_write ? O_WRONLY : O_RDONLY;
	if (direct)
		flags |= O_DIRECT;
	int fd = open(path, flags);
	if (fd < 0)
		die(path);

	uint64_t rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)getpid() << 17) ^ now_ns();
	if (!rng)
		rng = 1;
	uint64_t seq_blk = 0;
	uint64_t ops = 0, lat_sum = 0;
	const uint64_t t0 = now_ns();
	const uint64_t deadline = seconds > 0 ? t0 + (uint64_t)(seconds * 1e9) : UINT64_MAX;
	if (!max_ops)
		max_ops = UINT64_MAX;
	uint64_t prev = t0, now = t0;

	for (;;) {
		uint64_t blk;
		if (is_rand) {
			blk = (uint64_t)(((unsigned __int128)xs_next(&rng) * nblocks) >> 64);
		} else {
			blk = seq_blk;
			if (++seq_blk == nblocks)
				seq_blk = 0;
		}
		off_t off = (off_t)(blk * bs);
		ssize_t r = is_write ? pwrite(fd, buf, bs, off) : pread(fd, buf, bs, off);
		if (r != (ssize_t)bs) {
			if (r < 0)
				die(is_write ? "pwrite" : "pread");
			fprintf(stderr, "pread_loop: short %s at %lld: %zd\n",
				is_write ? "write" : "read", (long long)off, r);
			exit(1);
		}
		now = now_ns();
		lat_sum += now - prev;
		prev = now;
		if (++ops >= max_ops || now >= deadline)
			break;
	}
	close(fd);

	double elapsed = (double)(now - t0) / 1e9;
	double iops = elapsed > 0 ? (double)ops / elapsed : 0.0;
	printf("iops=%.1f bw_bytes=%.1f ops=%llu lat_mean_ns=%.1f\n",
	       iops, iops * (double)bs, (unsigned long long)ops,
	       ops ? (double)lat_sum / (double)ops : 0.0);
	free(buf);
	return 0;
}
