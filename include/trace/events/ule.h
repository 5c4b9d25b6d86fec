/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the ULE scheduling class (kernel/sched/ule.c): a thread
 * crossing between ULE's interactive and batch priority bands, and each
 * thread the periodic balancer or an idle CPU's steal moves, with the
 * loads that made it move. Documentation/scheduler/ule.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ule

#if !defined(_TRACE_ULE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_ULE_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

/*
 * A timeshare thread's priority moved between the interactive band (the
 * realtime queue) and the batch band (the calendar): @score is its
 * interactivity score, @old_prio and @new_prio ULE priorities (0-255).
 */
TRACE_EVENT(ule_interactive,
	    TP_PROTO(struct task_struct *p, unsigned int score,
		     unsigned int old_prio, unsigned int new_prio, bool interactive),
	    TP_ARGS(p, score, old_prio, new_prio, interactive),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __array(char, comm, TASK_COMM_LEN)
			     __field(unsigned int, score)
			     __field(unsigned int, old_prio)
			     __field(unsigned int, new_prio)
			     __field(bool, interactive)),
	    TP_fast_assign(__entry->pid = p->pid;
			   memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
			   __entry->score = score;
			   __entry->old_prio = old_prio;
			   __entry->new_prio = new_prio;
			   __entry->interactive = interactive;),
	    TP_printk("pid=%d comm=%s score=%u prio=%u->%u now=%s",
		      __entry->pid, __entry->comm, __entry->score, __entry->old_prio,
		      __entry->new_prio, __entry->interactive ? "interactive" : "batch"));

/*
 * The balancer (@steal false) or an idle CPU stealing (@steal true) moved
 * @p from @src to @dst; @src_load and @dst_load are ULE's per-CPU thread
 * counts (tdq_load) before the move.
 */
TRACE_EVENT(ule_transfer,
	    TP_PROTO(struct task_struct *p, int src, int dst,
		     unsigned int src_load, unsigned int dst_load, bool steal),
	    TP_ARGS(p, src, dst, src_load, dst_load, steal),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __array(char, comm, TASK_COMM_LEN)
			     __field(int, src)
			     __field(int, dst)
			     __field(unsigned int, src_load)
			     __field(unsigned int, dst_load)
			     __field(bool, steal)),
	    TP_fast_assign(__entry->pid = p->pid;
			   memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
			   __entry->src = src;
			   __entry->dst = dst;
			   __entry->src_load = src_load;
			   __entry->dst_load = dst_load;
			   __entry->steal = steal;),
	    TP_printk("pid=%d comm=%s src=%d dst=%d src_load=%u dst_load=%u by=%s",
		      __entry->pid, __entry->comm, __entry->src, __entry->dst,
		      __entry->src_load, __entry->dst_load,
		      __entry->steal ? "steal" : "balancer"));

#endif /* _TRACE_ULE_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
