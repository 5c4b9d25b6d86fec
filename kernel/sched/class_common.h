/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mechanism shared by the classes that can run normal tasks instead of
 * CFS (ULE, BMQ, MuQSS); policy stays in each class.
 */
#ifndef _KERNEL_SCHED_CLASS_COMMON_H
#define _KERNEL_SCHED_CLASS_COMMON_H

#include <linux/printk.h>
#include <linux/sysctl.h>
#include <linux/task_work.h>

/*
 * Have @fn run as @p, the current task, returns to user space, unless it
 * is already queued (*@queued, which @fn clears first): how a class ends
 * the boost of a task preempted in kernel code. False if it cannot run
 * there (a kernel thread, an exiting task).
 */
static inline bool sched_queue_resume(struct task_struct *p, struct callback_head *work,
				      bool *queued, task_work_func_t fn)
{
	if (p->flags & PF_KTHREAD)
		return false;
	if (READ_ONCE(*queued))
		return true;
	init_task_work(work, fn);
	if (task_work_add(p, work, TWA_RESUME))
		return false;
	WRITE_ONCE(*queued, true);
	return true;
}

/*
 * proc_dointvec_minmax() for a class's integer knobs (extra1 and extra2
 * its bounds), with one line that says what a refused write may be:
 * EINVAL alone does not.
 */
static inline int sched_class_dointvec_minmax(struct ctl_table *table, int write,
					      void *buffer, size_t *lenp, loff_t *ppos)
{
	int ret = proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	if (write && ret == -EINVAL)
		pr_warn_ratelimited("sched: kernel.%s takes an integer from %d to %d\n",
				    table->procname, *(int *)table->extra1,
				    *(int *)table->extra2);
	return ret;
}

#endif /* _KERNEL_SCHED_CLASS_COMMON_H */
