/*
 * GET /v1/metrics (`metrics` extension, Documentation/protocol/runtime-api.md):
 * what the sandbox uses, read from /proc (inside a sandbox's PID namespace
 * /proc shows the sandbox's processes only) and from the workdir.
 */
#include "compat.h"
#include "runtime.h"

#include <dirent.h>
#include <pthread.h>
#include <ftw.h>
#include <sys/stat.h>

struct proc_totals {
	uint64_t ticks; /* utime + stime of every process, clock ticks */
	uint64_t rss_pages;
	int processes;
};

static void sample_procs(struct proc_totals *t)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	memset(t, 0, sizeof(*t));
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[300], buf[1024];
		unsigned long utime, stime;
		long rss;
		const char *p;
		FILE *fp;
		size_t n;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fp = fopen(path, "re");
		if (!fp)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		buf[n] = '\0';
		/* fields after the command name, which may hold spaces */
		p = strrchr(buf, ')');
		if (!p)
			continue;
		if (sscanf(p + 2,
			   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			   "%lu %lu %*d %*d %*d %*d %*d %*d %*u %*u %ld",
			   &utime, &stime, &rss) != 3)
			continue;
		t->ticks += utime + stime;
		t->rss_pages += rss > 0 ? rss : 0;
		t->processes++;
	}
	closedir(d);
}

static uint64_t disk_bytes;

static int add_usage(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	if (flag == FTW_F || flag == FTW_D || flag == FTW_SL)
		disk_bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

enum MHD_Result handle_metrics(struct MHD_Connection *c, struct request *r)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct proc_totals a, b;
	struct strbuf body = STRBUF_INIT;
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	uint64_t t0, t1, disk;
	double cpu;

	/* CPU: the share of one CPU used over a 100 ms window */
	t0 = monotonic_us();
	sample_procs(&a);
	usleep(100000);
	sample_procs(&b);
	t1 = monotonic_us();
	cpu = b.ticks > a.ticks
		      ? (double)(b.ticks - a.ticks) / hz * 1e6 / (t1 - t0) * 100
		      : 0;

	pthread_mutex_lock(&lock);
	disk_bytes = 0;
	nftw(rt.root, add_usage, 32, FTW_PHYS | FTW_MOUNT);
	disk = disk_bytes;
	pthread_mutex_unlock(&lock);

	strbuf_addf(&body,
		    "{\"cpu_usage\":%.2f,\"memory_usage\":%.2f,"
		    "\"disk_usage\":%" PRIu64 ",\"processes\":%d,"
		    "\"uptime_s\":%" PRIu64 "}",
		    cpu, (double)b.rss_pages * page / (1024.0 * 1024.0), disk,
		    b.processes, (monotonic_ms() - rt.started_ms) / 1000);
	return reply_json(c, r, 200, &body);
}
