// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler event recorder.
 *
 * Records the sched_events tracepoints without sampling into per-CPU
 * buffers of fixed-size 16-byte records, written only by their own CPU
 * with a local64 reservation, so recording takes no lock and no shared
 * cache line. Two modes: "fill" stops recording into a full buffer,
 * "flight" keeps overwriting the oldest records so that the last window
 * before an event of interest is always there; the sanity checker freezes
 * a flight recording when it confirms a violation.
 *
 * Control and dump: /sys/kernel/debug/sched/events/. The dump format is
 * versioned and described in Documentation/scheduler/sched-events.rst;
 * records are stored little-endian, so the dump is the buffers as they are.
 */
#define CREATE_TRACE_POINTS
#include <trace/events/sched_events.h>
#undef CREATE_TRACE_POINTS

#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/sched/clock.h>
#include <linux/sched/cputime.h>
#include <linux/sched/events.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/local64.h>

#include "sched.h"

/* Record types, part of the dump ABI. */
enum {
	SEV_PAD		= 0,
	SEV_NR_RUNNING	= 1,
	SEV_LOAD	= 2,
	SEV_CONSIDER	= 3,
	SEV_CPUS	= 4,
	SEV_MIGRATE	= 5,
	SEV_WAKE_BUSY	= 6,
	SEV_VIOLATION	= 7,
};

#define SEV_VERSION		1
#define SEV_TS_MASK		GENMASK_ULL(47, 0)
#define SEV_TYPE_SHIFT		48
#define SEV_ARG_SHIFT		56
#define SEV_FLAG_FLIGHT		BIT(0)
#define SEV_FLAG_FROZEN		BIT(1)
#define SEV_MIN_KB		4
#define SEV_MAX_KB		(1024 * 1024)
/* All buffers together may take at most 1/SEV_RAM_SHARE of the RAM. */
#define SEV_RAM_SHARE		2

struct sev_rec {
	__le64 hdr;	/* timestamp | type << 48 | argument << 56 */
	__le32 a;
	__le32 b;
};

struct sev_file_header {
	char magic[8];
	__le16 version;
	__le16 header_size;
	__le16 record_size;
	__le16 flags;
	__le32 nr_cpus;
	__le32 nr_nodes;
	__le64 start_ns;
	__le64 duration_ns;
	__le32 frozen_report_id;
	__le32 capacity;
	u8 reserved[16];
};

struct sev_section_header {
	__le32 cpu;
	__le32 reserved;
	__le64 nr_records;
	__le64 written;
	__le64 lost;
};

struct sev_cpu {
	struct sev_rec *rec;
	local64_t head;		/* records reserved since start */
	local64_t dropped;	/* records refused because fill mode was full */
};

enum sev_state {
	SEV_STOPPED,
	SEV_RECORDING,
	SEV_FROZEN,
};

static DEFINE_PER_CPU(struct sev_cpu, sev_cpus);
DEFINE_PER_CPU(struct cpumask, sched_ev_seen);

static DEFINE_MUTEX(sev_mutex);		/* serialises control and dump opens */
static int sev_state = SEV_STOPPED;	/* freeze changes it without the mutex */
static bool sev_writing;		/* probes record only while set */
static bool sev_probes_on;
static bool sev_flight;			/* mode for the next start */
static bool sev_cur_flight;		/* mode of the buffers' contents */
static unsigned int sev_buffer_kb = 1024;
static u64 sev_capacity;		/* records per CPU, a power of two */
static u64 sev_start_ns;
static u64 sev_stop_ns;
static unsigned int sev_frozen_id;
static int sev_dump_users;

static const char * const sev_state_names[] = {
	[SEV_STOPPED]	= "stopped",
	[SEV_RECORDING]	= "recording",
	[SEV_FROZEN]	= "frozen",
};

static inline void sev_put(struct sev_cpu *sc, u64 slot, u64 hdr, u32 a, u32 b)
{
	struct sev_rec *r = &sc->rec[slot & (sev_capacity - 1)];

	r->hdr = cpu_to_le64(hdr);
	r->a = cpu_to_le32(a);
	r->b = cpu_to_le32(b);
}

static inline unsigned long sev_word(const struct cpumask *m, const struct cpumask *and,
				     unsigned int i)
{
	unsigned long w = cpumask_bits(m)[i];

	return and ? w & cpumask_bits(and)[i] : w;
}

/*
 * Append one record, plus one SEV_CPUS record per non-zero 64-bit word of
 * @m & @and. Runs in tracepoint context (preemption disabled); an interrupt
 * nesting on this CPU reserves its own slots, so the fields never mix.
 */
static void sev_emit(unsigned int type, unsigned int arg, u32 a, u32 b,
		     const struct cpumask *m, const struct cpumask *and)
{
	unsigned int words = m ? BITS_TO_LONGS(nr_cpu_ids) : 0;
	unsigned int i, n = 1, k;
	struct sev_cpu *sc;
	u64 slot, hdr;
	s64 ts;

	if (!READ_ONCE(sev_writing))
		return;

	for (i = 0; i < words; i++)
		if (sev_word(m, and, i))
			n++;

	sc = this_cpu_ptr(&sev_cpus);
	slot = local64_add_return(n, &sc->head) - n;
	if (!sev_cur_flight && slot + n > sev_capacity) {
		/* Pad what fits so the dump never shows half an event. */
		for (; slot < sev_capacity; slot++)
			sev_put(sc, slot, 0, 0, 0);
		local64_add(n, &sc->dropped);
		return;
	}

	/* Another CPU's clock may trail the start stamp by a little. */
	ts = max_t(s64, (s64)(local_clock() - sev_start_ns), 0);
	hdr = ((u64)ts & SEV_TS_MASK) | ((u64)type << SEV_TYPE_SHIFT);
	sev_put(sc, slot, hdr | ((u64)arg << SEV_ARG_SHIFT), a, b);

	hdr = ((u64)ts & SEV_TS_MASK) | ((u64)SEV_CPUS << SEV_TYPE_SHIFT);
	for (i = 0, k = 1; i < words && k < n; i++) {
		unsigned long w = sev_word(m, and, i);

		if (w)
			sev_put(sc, slot + k++, hdr | ((u64)i << SEV_ARG_SHIFT),
				lower_32_bits(w), upper_32_bits(w));
	}
	/* The mask changed under us (affinity update): keep the count honest. */
	for (; k < n; k++)
		sev_put(sc, slot + k, 0, 0, 0);
}

static inline u32 sev_cpu_pair(int lo, int hi)
{
	return (u32)(lo & 0xffff) | ((u32)(hi & 0xffff) << 16);
}

static void sev_probe_nr_running(void *data, int cpu, unsigned int nr_running, int change)
{
	/* The signed change lets a decoder tell the length before the window. */
	sev_emit(SEV_NR_RUNNING, (u8)clamp(change, -128, 127), cpu, nr_running, NULL, NULL);
}

static void sev_probe_load(void *data, int cpu, unsigned long load)
{
	sev_emit(SEV_LOAD, 0, cpu, min_t(unsigned long, load, U32_MAX), NULL, NULL);
}

static void sev_probe_considered(void *data, int kind, int subject, int result,
				 const struct cpumask *cpus, const struct cpumask *and)
{
	sev_emit(SEV_CONSIDER, kind, subject, result, cpus, and);
}

static void sev_probe_migrate(void *data, struct task_struct *p, int src, int dst, int reason)
{
	sev_emit(SEV_MIGRATE, reason, p->pid, sev_cpu_pair(src, dst), NULL, NULL);
}

static void sev_probe_wake_busy(void *data, struct task_struct *p, int target, int idle)
{
	sev_emit(SEV_WAKE_BUSY, 0, p->pid, sev_cpu_pair(target, idle), NULL, NULL);
}

static void sev_probe_violation(void *data, unsigned int id, int phase, int idle, int busy)
{
	sev_emit(SEV_VIOLATION, phase, id, sev_cpu_pair(idle, busy), NULL, NULL);
}

/* Called from try_to_wake_up() while the wake_busy tracepoint is enabled. */
void sched_ev_check_wake_busy(struct task_struct *p, int cpu)
{
	int i;

	if (idle_cpu(cpu))
		return;

	for_each_cpu_wrap(i, p->cpus_ptr, cpu) {
		if (i != cpu && cpu_active(i) && idle_cpu(i)) {
			trace_wake_busy(p, cpu, i);
			return;
		}
	}
}

static void sev_unregister_probes(void)
{
	unregister_trace_sanity_violation(sev_probe_violation, NULL);
	unregister_trace_wake_busy(sev_probe_wake_busy, NULL);
	unregister_trace_task_migrate(sev_probe_migrate, NULL);
	unregister_trace_cpus_considered(sev_probe_considered, NULL);
	unregister_trace_rq_load(sev_probe_load, NULL);
	unregister_trace_rq_nr_running(sev_probe_nr_running, NULL);
	tracepoint_synchronize_unregister();
	sev_probes_on = false;
}

/*
 * A frozen recording takes no more events: unhook the probes, so that the
 * tracepoints go back to no-ops (wake_busy's scan of the allowed CPUs
 * included) until the next start. sched_events_freeze() cannot sleep for
 * the RCU grace period this takes, so it queues this.
 */
static void sev_unhook_fn(struct work_struct *work)
{
	mutex_lock(&sev_mutex);
	if (READ_ONCE(sev_state) == SEV_FROZEN && sev_probes_on)
		sev_unregister_probes();
	mutex_unlock(&sev_mutex);
}

static DECLARE_WORK(sev_unhook_work, sev_unhook_fn);

static int sev_register_probes(void)
{
	int ret;

	ret = register_trace_rq_nr_running(sev_probe_nr_running, NULL);
	if (!ret)
		ret = register_trace_rq_load(sev_probe_load, NULL);
	if (!ret)
		ret = register_trace_cpus_considered(sev_probe_considered, NULL);
	if (!ret)
		ret = register_trace_task_migrate(sev_probe_migrate, NULL);
	if (!ret)
		ret = register_trace_wake_busy(sev_probe_wake_busy, NULL);
	if (!ret)
		ret = register_trace_sanity_violation(sev_probe_violation, NULL);
	sev_probes_on = true;
	if (ret)
		sev_unregister_probes();	/* unregistering a missing probe is harmless */
	return ret;
}

static void sev_free_buffers(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sev_cpu *sc = per_cpu_ptr(&sev_cpus, cpu);

		vfree(sc->rec);
		sc->rec = NULL;
	}
	sev_capacity = 0;
}

/* Can @kb KiB per possible CPU ever fit? At most 1/SEV_RAM_SHARE of the RAM. */
static bool sev_size_fits(unsigned int kb)
{
	u64 pages = DIV_ROUND_UP_ULL((u64)kb * SZ_1K, PAGE_SIZE) * num_possible_cpus();

	return pages <= totalram_pages() / SEV_RAM_SHARE;
}

/*
 * Allocate the buffers without waking the OOM killer: refuse what the free
 * and reclaimable memory cannot hold, and let each allocation fail rather
 * than kill for it (as the ftrace ring buffer does).
 */
static int sev_alloc_buffers(void)
{
	u64 cap = rounddown_pow_of_two((u64)sev_buffer_kb * 1024 / sizeof(struct sev_rec));
	u64 pages = DIV_ROUND_UP_ULL(cap * sizeof(struct sev_rec), PAGE_SIZE);
	int cpu;

	if (cap == sev_capacity)
		return 0;

	sev_free_buffers();
	if (!sev_size_fits(sev_buffer_kb) ||
	    pages * num_possible_cpus() > si_mem_available() / SEV_RAM_SHARE)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct sev_cpu *sc = per_cpu_ptr(&sev_cpus, cpu);

		sc->rec = __vmalloc_node(cap * sizeof(struct sev_rec), 1,
					 GFP_KERNEL | __GFP_ZERO | __GFP_RETRY_MAYFAIL |
					 __GFP_NOWARN, cpu_to_node(cpu),
					 __builtin_return_address(0));
		if (!sc->rec) {
			sev_free_buffers();
			return -ENOMEM;
		}
	}
	sev_capacity = cap;
	return 0;
}

static void sev_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sev_cpu *sc = per_cpu_ptr(&sev_cpus, cpu);

		local64_set(&sc->head, 0);
		local64_set(&sc->dropped, 0);
	}
	sev_frozen_id = 0;
	sev_start_ns = 0;
	sev_stop_ns = 0;
}

/**
 * sched_events_freeze - stop a flight recording so its window survives
 * @report_id: the sanity-checker report the window belongs to
 *
 * Only a recording in flight mode is frozen. Recording stops at once; the
 * probes are unregistered shortly after, from a work item.
 *
 * Context: any context that may wake a task (no runqueue lock held).
 * Return: true if this call froze the recording.
 */
bool sched_events_freeze(unsigned int report_id)
{
	if (!READ_ONCE(sev_cur_flight) ||
	    cmpxchg(&sev_state, SEV_RECORDING, SEV_FROZEN) != SEV_RECORDING)
		return false;

	WRITE_ONCE(sev_writing, false);
	WRITE_ONCE(sev_stop_ns, local_clock());
	WRITE_ONCE(sev_frozen_id, report_id);
	schedule_work(&sev_unhook_work);
	return true;
}

/*
 * This CPU's length and load at the start, so charts begin known. Each CPU
 * writes its own two records into its own buffer: one CPU writing all of
 * them would fill the smallest buffer at 128 CPUs.
 *
 * Context: IPI from on_each_cpu(), interrupts off.
 */
static void sev_snapshot_cpu(void *unused)
{
	struct rq *rq = this_rq();
	int cpu = smp_processor_id();

	sev_emit(SEV_NR_RUNNING, 0, cpu, READ_ONCE(rq->nr_running), NULL, NULL);
	sev_emit(SEV_LOAD, 0, cpu,
		 min_t(unsigned long, scale_load_down(READ_ONCE(rq->cfs.load.weight)), U32_MAX),
		 NULL, NULL);
}

#ifdef CONFIG_SCHED_EVENTS_KUNIT_TEST
/* KUnit's stand-in for a freeze that lands while a start publishes. */
static void (*sev_start_window_hook)(void);

static void sev_start_window(void)
{
	if (sev_start_window_hook)
		sev_start_window_hook();
}
#else
static inline void sev_start_window(void) { }
#endif

static int sev_start(void)
{
	int ret;

	lockdep_assert_held(&sev_mutex);
	if (READ_ONCE(sev_state) == SEV_RECORDING)
		return -EBUSY;
	if (sev_dump_users)
		return -EBUSY;
	if (sev_probes_on)
		sev_unregister_probes();

	ret = sev_alloc_buffers();
	if (ret)
		return ret;
	sev_reset();
	sev_cur_flight = sev_flight;
	ret = sev_register_probes();
	if (ret)
		return ret;

	sev_start_ns = local_clock();
	/* Writers read the start stamp after they see this. */
	smp_store_release(&sev_writing, true);
	on_each_cpu(sev_snapshot_cpu, NULL, 1);
	/*
	 * Only now may sched_events_freeze() stop it: a freeze before this
	 * would have its sev_writing cleared by the store above and the
	 * frozen window written over.
	 */
	sev_start_window();
	WRITE_ONCE(sev_state, SEV_RECORDING);
	return 0;
}

static int sev_stop(void)
{
	WRITE_ONCE(sev_writing, false);
	if (cmpxchg(&sev_state, SEV_RECORDING, SEV_STOPPED) == SEV_RECORDING)
		sev_stop_ns = local_clock();
	if (sev_probes_on)
		sev_unregister_probes();
	return 0;
}

static int sev_control(const char *cmd)
{
	lockdep_assert_held(&sev_mutex);
	if (!strcmp(cmd, "start"))
		return sev_start();
	if (!strcmp(cmd, "stop"))
		return sev_stop();
	if (!strcmp(cmd, "clear") || !strcmp(cmd, "release")) {
		if (READ_ONCE(sev_state) == SEV_RECORDING || sev_dump_users)
			return -EBUSY;
		if (sev_probes_on)
			sev_unregister_probes();
		sev_reset();
		WRITE_ONCE(sev_state, SEV_STOPPED);
		if (!strcmp(cmd, "release"))
			sev_free_buffers();
		return 0;
	}
	return -EINVAL;
}

static ssize_t sev_read_str(char __user *ubuf, size_t cnt, loff_t *ppos, const char *s)
{
	return simple_read_from_buffer(ubuf, cnt, ppos, s, strlen(s));
}

static int sev_copy_word(const char __user *ubuf, size_t cnt, char *buf, size_t size)
{
	if (cnt >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	strim(buf);
	return 0;
}

static ssize_t sev_control_read(struct file *f, char __user *ubuf, size_t cnt, loff_t *ppos)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%s\n", sev_state_names[READ_ONCE(sev_state)]);
	return sev_read_str(ubuf, cnt, ppos, buf);
}

static ssize_t sev_control_write(struct file *f, const char __user *ubuf, size_t cnt,
				 loff_t *ppos)
{
	char buf[16];
	int ret;

	ret = sev_copy_word(ubuf, cnt, buf, sizeof(buf));
	if (ret)
		return ret;
	mutex_lock(&sev_mutex);
	ret = sev_control(strim(buf));
	mutex_unlock(&sev_mutex);
	return ret ? ret : cnt;
}

static const struct file_operations sev_control_fops = {
	.read	= sev_control_read,
	.write	= sev_control_write,
	.llseek	= default_llseek,
};

static ssize_t sev_mode_read(struct file *f, char __user *ubuf, size_t cnt, loff_t *ppos)
{
	return sev_read_str(ubuf, cnt, ppos, READ_ONCE(sev_flight) ? "flight\n" : "fill\n");
}

static ssize_t sev_mode_write(struct file *f, const char __user *ubuf, size_t cnt,
			      loff_t *ppos)
{
	char buf[16];
	bool flight;
	int ret;

	ret = sev_copy_word(ubuf, cnt, buf, sizeof(buf));
	if (ret)
		return ret;
	if (!strcmp(strim(buf), "flight"))
		flight = true;
	else if (!strcmp(strim(buf), "fill"))
		flight = false;
	else
		return -EINVAL;

	mutex_lock(&sev_mutex);
	if (READ_ONCE(sev_state) == SEV_RECORDING)
		ret = -EBUSY;
	else
		WRITE_ONCE(sev_flight, flight);
	mutex_unlock(&sev_mutex);
	return ret ? ret : cnt;
}

static const struct file_operations sev_mode_fops = {
	.read	= sev_mode_read,
	.write	= sev_mode_write,
	.llseek	= default_llseek,
};

static ssize_t sev_size_read(struct file *f, char __user *ubuf, size_t cnt, loff_t *ppos)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u\n", READ_ONCE(sev_buffer_kb));
	return sev_read_str(ubuf, cnt, ppos, buf);
}

static ssize_t sev_size_write(struct file *f, const char __user *ubuf, size_t cnt,
			      loff_t *ppos)
{
	unsigned int kb;
	int ret;

	ret = kstrtouint_from_user(ubuf, cnt, 10, &kb);
	if (ret)
		return ret;
	if (kb < SEV_MIN_KB || kb > SEV_MAX_KB || !sev_size_fits(kb))
		return -EINVAL;

	mutex_lock(&sev_mutex);
	if (READ_ONCE(sev_state) == SEV_RECORDING)
		ret = -EBUSY;
	else
		WRITE_ONCE(sev_buffer_kb, kb);	/* takes effect at the next start */
	mutex_unlock(&sev_mutex);
	return ret ? ret : cnt;
}

static const struct file_operations sev_size_fops = {
	.read	= sev_size_read,
	.write	= sev_size_write,
	.llseek	= default_llseek,
};

/* Records of @cpu in the dump, oldest first: the last window in flight mode. */
static void sev_window(int cpu, u64 *first, u64 *nr)
{
	u64 head = local64_read(&per_cpu_ptr(&sev_cpus, cpu)->head);

	*nr = min(head, sev_capacity);
	*first = sev_cur_flight ? head - *nr : 0;
}

static u64 sev_lost(int cpu)
{
	struct sev_cpu *sc = per_cpu_ptr(&sev_cpus, cpu);
	u64 head = local64_read(&sc->head);

	if (sev_cur_flight)
		return head > sev_capacity ? head - sev_capacity : 0;
	return local64_read(&sc->dropped);
}

struct sev_dump {
	size_t prefix_len;
	u8 *prefix;		/* file header and node map */
	loff_t *sec_off;	/* start of each CPU's section */
	u64 *sec_first;
	u64 *sec_nr;
	loff_t size;
};

static void sev_dump_free(struct sev_dump *d)
{
	kfree(d->prefix);
	kfree(d->sec_off);
	kfree(d->sec_first);
	kfree(d->sec_nr);
	kfree(d);
}

static struct sev_dump *sev_dump_build(void)
{
	unsigned int nr = nr_cpu_ids, cpu;
	struct sev_file_header *h;
	struct sev_dump *d;
	__le16 *map;
	loff_t off;
	u64 stop;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return NULL;
	d->prefix_len = sizeof(*h) + ALIGN(nr * sizeof(*map), 8);
	d->prefix = kzalloc(d->prefix_len, GFP_KERNEL);
	d->sec_off = kcalloc(nr + 1, sizeof(*d->sec_off), GFP_KERNEL);
	d->sec_first = kcalloc(nr, sizeof(*d->sec_first), GFP_KERNEL);
	d->sec_nr = kcalloc(nr, sizeof(*d->sec_nr), GFP_KERNEL);
	if (!d->prefix || !d->sec_off || !d->sec_first || !d->sec_nr) {
		sev_dump_free(d);
		return NULL;
	}

	h = (struct sev_file_header *)d->prefix;
	memcpy(h->magic, "SCHEDEVT", sizeof(h->magic));
	h->version = cpu_to_le16(SEV_VERSION);
	h->header_size = cpu_to_le16(sizeof(*h));
	h->record_size = cpu_to_le16(sizeof(struct sev_rec));
	h->flags = cpu_to_le16((sev_cur_flight ? SEV_FLAG_FLIGHT : 0) |
			       (sev_frozen_id ? SEV_FLAG_FROZEN : 0));
	h->nr_cpus = cpu_to_le32(nr);
	h->nr_nodes = cpu_to_le32(nr_node_ids);
	h->start_ns = cpu_to_le64(sev_start_ns);
	stop = READ_ONCE(sev_state) == SEV_RECORDING ? local_clock() : sev_stop_ns;
	h->duration_ns = cpu_to_le64(stop > sev_start_ns ? stop - sev_start_ns : 0);
	h->frozen_report_id = cpu_to_le32(sev_frozen_id);
	h->capacity = cpu_to_le32(sev_capacity);

	map = (__le16 *)(h + 1);
	for (cpu = 0; cpu < nr; cpu++)
		map[cpu] = cpu_to_le16(cpu_possible(cpu) ? cpu_to_node(cpu) : 0xffff);

	off = d->prefix_len;
	for (cpu = 0; cpu < nr; cpu++) {
		d->sec_off[cpu] = off;
		if (cpu_possible(cpu))
			sev_window(cpu, &d->sec_first[cpu], &d->sec_nr[cpu]);
		off += sizeof(struct sev_section_header) +
		       d->sec_nr[cpu] * sizeof(struct sev_rec);
	}
	d->sec_off[nr] = off;
	d->size = off;
	return d;
}

static int sev_dump_open(struct inode *inode, struct file *f)
{
	struct sev_dump *d;
	int ret = 0;

	mutex_lock(&sev_mutex);
	if (READ_ONCE(sev_state) == SEV_RECORDING) {
		ret = -EBUSY;
		goto out;
	}
	if (!sev_capacity) {
		ret = -ENODATA;
		goto out;
	}
	/* A freeze does not wait: let writers that were mid-record finish. */
	synchronize_rcu();
	d = sev_dump_build();
	if (!d) {
		ret = -ENOMEM;
		goto out;
	}
	f->private_data = d;
	sev_dump_users++;
out:
	mutex_unlock(&sev_mutex);
	return ret;
}

static int sev_dump_release(struct inode *inode, struct file *f)
{
	sev_dump_free(f->private_data);
	mutex_lock(&sev_mutex);
	sev_dump_users--;
	mutex_unlock(&sev_mutex);
	return 0;
}

/* Copy at most @cnt bytes of the dump at @pos; returns bytes or -EFAULT. */
static ssize_t sev_dump_chunk(struct sev_dump *d, char __user *ubuf, size_t cnt, loff_t pos)
{
	struct sev_section_header sh;
	unsigned int cpu = 0;
	u64 idx, run;
	loff_t rel;
	size_t len;

	if (pos < d->prefix_len) {
		len = min_t(size_t, cnt, d->prefix_len - pos);
		return copy_to_user(ubuf, d->prefix + pos, len) ? -EFAULT : len;
	}

	while (pos >= d->sec_off[cpu + 1])
		cpu++;
	rel = pos - d->sec_off[cpu];
	if (rel < sizeof(sh)) {
		sh.cpu = cpu_to_le32(cpu);
		sh.reserved = 0;
		sh.nr_records = cpu_to_le64(d->sec_nr[cpu]);
		sh.written = cpu_to_le64(cpu_possible(cpu) ?
			local64_read(&per_cpu_ptr(&sev_cpus, cpu)->head) : 0);
		sh.lost = cpu_to_le64(cpu_possible(cpu) ? sev_lost(cpu) : 0);
		len = min_t(size_t, cnt, sizeof(sh) - rel);
		return copy_to_user(ubuf, (u8 *)&sh + rel, len) ? -EFAULT : len;
	}

	rel -= sizeof(sh);
	idx = (d->sec_first[cpu] + rel / sizeof(struct sev_rec)) & (sev_capacity - 1);
	/* Contiguous until the end of the window or of the ring. */
	run = min(d->sec_nr[cpu] - rel / sizeof(struct sev_rec), sev_capacity - idx);
	len = min_t(size_t, cnt, run * sizeof(struct sev_rec) - rel % sizeof(struct sev_rec));
	return copy_to_user(ubuf, (u8 *)&per_cpu_ptr(&sev_cpus, cpu)->rec[idx] +
			    rel % sizeof(struct sev_rec), len) ? -EFAULT : len;
}

static ssize_t sev_dump_read(struct file *f, char __user *ubuf, size_t cnt, loff_t *ppos)
{
	struct sev_dump *d = f->private_data;
	ssize_t done = 0, n;

	while (cnt && *ppos < d->size) {
		n = sev_dump_chunk(d, ubuf + done, min_t(loff_t, cnt, d->size - *ppos), *ppos);
		if (n < 0)
			return done ? done : n;
		*ppos += n;
		done += n;
		cnt -= n;
		cond_resched();
	}
	return done;
}

static const struct file_operations sev_dump_fops = {
	.open		= sev_dump_open,
	.read		= sev_dump_read,
	.release	= sev_dump_release,
	.llseek		= default_llseek,
};

static int sev_stats_show(struct seq_file *m, void *v)
{
	u64 first, nr;
	int cpu;

	mutex_lock(&sev_mutex);
	seq_printf(m, "state %s\nmode %s\nbuffer_kb %u\ncapacity %llu\nfrozen_report %u\nprobes %s\n",
		   sev_state_names[READ_ONCE(sev_state)], sev_flight ? "flight" : "fill",
		   sev_buffer_kb, sev_capacity, READ_ONCE(sev_frozen_id),
		   sev_probes_on ? "on" : "off");
	seq_puts(m, "cpu written records lost\n");
	if (sev_capacity) {
		for_each_possible_cpu(cpu) {
			sev_window(cpu, &first, &nr);
			seq_printf(m, "%d %llu %llu %llu\n", cpu,
				   (u64)local64_read(&per_cpu_ptr(&sev_cpus, cpu)->head),
				   nr, sev_lost(cpu));
		}
	}
	mutex_unlock(&sev_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sev_stats);

static int __init sched_events_init(void)
{
	struct dentry *sched, *dir;

	/* kernel/sched/debug.c made "sched" in an earlier late initcall. */
	sched = debugfs_lookup("sched", NULL);
	if (sched) {
		dir = debugfs_create_dir("events", sched);
		dput(sched);
	} else {
		dir = debugfs_create_dir("events", debugfs_create_dir("sched", NULL));
	}
	debugfs_create_file("control", 0644, dir, NULL, &sev_control_fops);
	debugfs_create_file("mode", 0644, dir, NULL, &sev_mode_fops);
	debugfs_create_file("buffer_kb", 0644, dir, NULL, &sev_size_fops);
	debugfs_create_file("dump", 0400, dir, NULL, &sev_dump_fops);
	debugfs_create_file("stats", 0444, dir, NULL, &sev_stats_fops);
	return 0;
}
late_initcall_sync(sched_events_init);

#ifdef CONFIG_SCHED_EVENTS_KUNIT_TEST
#include "events_test.c"
#endif
