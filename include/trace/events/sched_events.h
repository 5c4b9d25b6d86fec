/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scheduler observability tracepoints: runqueue length and load, the CPUs
 * that placement and balancing looked at, migrations with their reason,
 * wakeups that land on a busy CPU while another is idle, and the sanity
 * checker's violations. The event recorder (kernel/sched/events.c) hooks
 * the same tracepoints, so trace-cmd, perf and the recorder see the same
 * stream. Documentation/scheduler/sched-events.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sched_events

#if !defined(_TRACE_SCHED_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_SCHED_EVENTS_H

#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/sched/events.h>
#include <linux/tracepoint.h>

#ifdef CONFIG_SCHED_EVENTS
#define TRACE_EVENT_SCHED_EV TRACE_EVENT
#else
#define TRACE_EVENT_SCHED_EV TRACE_EVENT_NOP
#endif

TRACE_DEFINE_ENUM(SCHED_EV_WAKE_IDLE_SIBLING);
TRACE_DEFINE_ENUM(SCHED_EV_FORK_IDLEST_GROUP);
TRACE_DEFINE_ENUM(SCHED_EV_LB_GROUP_STATS);
TRACE_DEFINE_ENUM(SCHED_EV_LB_BUSIEST_QUEUE);
TRACE_DEFINE_ENUM(SCHED_EV_WAKE_IDLE_LONGEST);
TRACE_DEFINE_ENUM(SCHED_EV_ULE_PICKCPU);
TRACE_DEFINE_ENUM(SCHED_EV_ULE_STEAL);
TRACE_DEFINE_ENUM(SCHED_EV_ULE_BALANCE);
TRACE_DEFINE_ENUM(SCHED_EV_BMQ_SELECT);
TRACE_DEFINE_ENUM(SCHED_EV_BMQ_PULL);
TRACE_DEFINE_ENUM(SCHED_EV_MUQSS_SELECT);
TRACE_DEFINE_ENUM(SCHED_EV_MUQSS_LOOK);
TRACE_DEFINE_ENUM(SCHED_MIGRATE_OTHER);
TRACE_DEFINE_ENUM(SCHED_MIGRATE_WAKEUP);
TRACE_DEFINE_ENUM(SCHED_MIGRATE_FORK);
TRACE_DEFINE_ENUM(SCHED_MIGRATE_BALANCE);
TRACE_DEFINE_ENUM(SCHED_MIGRATE_IDLE_BALANCE);
TRACE_DEFINE_ENUM(SCHED_MIGRATE_ACTIVE_BALANCE);
TRACE_DEFINE_ENUM(SCHED_SANITY_WATCH);
TRACE_DEFINE_ENUM(SCHED_SANITY_CONFIRM);
TRACE_DEFINE_ENUM(SCHED_SANITY_END);

#define show_sched_ev_kind(kind)					\
	__print_symbolic(kind,						\
		{ SCHED_EV_ULE_PICKCPU,		"ule_pickcpu" },	\
		{ SCHED_EV_ULE_STEAL,		"ule_steal" },		\
		{ SCHED_EV_ULE_BALANCE,		"ule_balance" },	\
		{ SCHED_EV_BMQ_SELECT,		"bmq_select" },		\
		{ SCHED_EV_BMQ_PULL,		"bmq_pull" },		\
		{ SCHED_EV_MUQSS_SELECT,	"muqss_select" },	\
		{ SCHED_EV_MUQSS_LOOK,		"muqss_look" },		\
		{ SCHED_EV_WAKE_IDLE_SIBLING,	"wake_idle_sibling" },	\
		{ SCHED_EV_FORK_IDLEST_GROUP,	"fork_idlest_group" },	\
		{ SCHED_EV_LB_GROUP_STATS,	"lb_group_stats" },	\
		{ SCHED_EV_LB_BUSIEST_QUEUE,	"lb_busiest_queue" },	\
		{ SCHED_EV_WAKE_IDLE_LONGEST,	"wake_idle_longest" })

#define show_sched_migrate_reason(reason)				\
	__print_symbolic(reason,					\
		{ SCHED_MIGRATE_OTHER,		"other" },		\
		{ SCHED_MIGRATE_WAKEUP,		"wakeup" },		\
		{ SCHED_MIGRATE_FORK,		"fork" },		\
		{ SCHED_MIGRATE_BALANCE,	"balance" },		\
		{ SCHED_MIGRATE_IDLE_BALANCE,	"idle_balance" },	\
		{ SCHED_MIGRATE_ACTIVE_BALANCE,	"active_balance" })

#define show_sched_sanity_phase(phase)					\
	__print_symbolic(phase,						\
		{ SCHED_SANITY_WATCH,		"watch" },		\
		{ SCHED_SANITY_CONFIRM,		"confirm" },		\
		{ SCHED_SANITY_END,		"end" })

/* The runqueue of @cpu now holds @nr_running tasks of all classes. */
TRACE_EVENT_SCHED_EV(rq_nr_running,
		     TP_PROTO(int cpu, unsigned int nr_running, int change),
		     TP_ARGS(cpu, nr_running, change),
		     TP_STRUCT__entry(__field(int, cpu)
				      __field(unsigned int, nr_running)
				      __field(int, change)),
		     TP_fast_assign(__entry->cpu = cpu;
				    __entry->nr_running = nr_running;
				    __entry->change = change;),
		     TP_printk("cpu=%d nr_running=%u change=%d",
			       __entry->cpu, __entry->nr_running, __entry->change));

/* The load the class balances on changed; for CFS the root runnable weight. */
TRACE_EVENT_SCHED_EV(rq_load,
		     TP_PROTO(int cpu, unsigned long load),
		     TP_ARGS(cpu, load),
		     TP_STRUCT__entry(__field(int, cpu)
				      __field(unsigned long, load)),
		     TP_fast_assign(__entry->cpu = cpu;
				    __entry->load = load;),
		     TP_printk("cpu=%d load=%lu", __entry->cpu, __entry->load));

/*
 * Placement or balancing looked at the CPUs in @cpus AND @and (@and may be
 * NULL); @subject is the task's pid for placement, the balancing CPU for
 * balancing kinds; @result is the CPU chosen, or -1.
 */
TRACE_EVENT_SCHED_EV(cpus_considered,
		     TP_PROTO(int kind, int subject, int result,
			      const struct cpumask *cpus, const struct cpumask *and),
		     TP_ARGS(kind, subject, result, cpus, and),
		     TP_STRUCT__entry(__field(int, kind)
				      __field(int, subject)
				      __field(int, result)
				      __bitmask(cpus, nr_cpumask_bits)),
		     TP_fast_assign(__entry->kind = kind;
				    __entry->subject = subject;
				    __entry->result = result;
				    sched_ev_cpus_and((unsigned long *)__get_bitmask(cpus),
						      cpus, and);),
		     TP_printk("kind=%s subject=%d result=%d cpus=%s",
			       show_sched_ev_kind(__entry->kind), __entry->subject,
			       __entry->result, __get_bitmask(cpus)));

TRACE_EVENT_SCHED_EV(task_migrate,
		     TP_PROTO(struct task_struct *p, int src, int dst, int reason),
		     TP_ARGS(p, src, dst, reason),
		     TP_STRUCT__entry(__field(pid_t, pid)
				      __array(char, comm, TASK_COMM_LEN)
				      __field(int, src)
				      __field(int, dst)
				      __field(int, reason)),
		     TP_fast_assign(__entry->pid = p->pid;
				    memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
				    __entry->src = src;
				    __entry->dst = dst;
				    __entry->reason = reason;),
		     TP_printk("pid=%d comm=%s src=%d dst=%d reason=%s",
			       __entry->pid, __entry->comm, __entry->src, __entry->dst,
			       show_sched_migrate_reason(__entry->reason)));

/* A wakeup was placed on busy @target although allowed @idle was idle. */
TRACE_EVENT_SCHED_EV(wake_busy,
		     TP_PROTO(struct task_struct *p, int target, int idle),
		     TP_ARGS(p, target, idle),
		     TP_STRUCT__entry(__field(pid_t, pid)
				      __array(char, comm, TASK_COMM_LEN)
				      __field(int, target)
				      __field(int, idle)),
		     TP_fast_assign(__entry->pid = p->pid;
				    memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
				    __entry->target = target;
				    __entry->idle = idle;),
		     TP_printk("pid=%d comm=%s target=%d idle=%d",
			       __entry->pid, __entry->comm, __entry->target, __entry->idle));

TRACE_EVENT_SCHED_EV(sanity_violation,
		     TP_PROTO(unsigned int id, int phase, int idle, int busy),
		     TP_ARGS(id, phase, idle, busy),
		     TP_STRUCT__entry(__field(unsigned int, id)
				      __field(int, phase)
				      __field(int, idle)
				      __field(int, busy)),
		     TP_fast_assign(__entry->id = id;
				    __entry->phase = phase;
				    __entry->idle = idle;
				    __entry->busy = busy;),
		     TP_printk("id=%u phase=%s idle=%d busy=%d", __entry->id,
			       show_sched_sanity_phase(__entry->phase), __entry->idle,
			       __entry->busy));

#endif /* _TRACE_SCHED_EVENTS_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
