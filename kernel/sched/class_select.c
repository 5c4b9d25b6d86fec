// SPDX-License-Identifier: GPL-2.0
/*
 * Which scheduling class runs SCHED_NORMAL, SCHED_BATCH and SCHED_IDLE
 * tasks: CONFIG_SCHED_DEFAULT_* picks the default, "sched=" overrides it
 * at boot, and /proc/sys/kernel/sched_class reports it and switches it at
 * run time.
 *
 * Built as part of build_utility.c. See
 * Documentation/scheduler/sched-class-select.rst.
 */

struct sched_class_choice {
	const char *name;
	const struct sched_class *class;
};

/* Classes that can run normal tasks: adding a class adds one line. */
static const struct sched_class_choice sched_normal_choices[] = {
	{ "cfs", &fair_sched_class },
#ifdef CONFIG_SCHED_ULE
	{ "ule", &ule_sched_class },
#endif
#ifdef CONFIG_SCHED_BMQ
	{ "bmq", &bmq_sched_class },
#endif
};

/* Index set by "sched=", which is parsed before sched_init(). */
static int sched_normal_override __initdata = -1;

static const struct sched_class_choice *sched_class_lookup(const char *name)
{
	int i;

	if (!name)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(sched_normal_choices); i++) {
		if (sysfs_streq(name, sched_normal_choices[i].name))
			return &sched_normal_choices[i];
	}
	return NULL;
}

/* "cfs ule bmq": the names "sched=" accepts, for messages. */
static void sched_class_known_names(char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(sched_normal_choices) && len < size; i++)
		len += scnprintf(buf + len, size - len, "%s%s", i ? " " : "",
				 sched_normal_choices[i].name);
}

/**
 * sched_class_name - short user-visible name of a scheduling class
 * @class: the class
 *
 * Normal-task classes use their "sched=" name; the others use the name of
 * their policy family. Used by /proc/<pid>/sched.
 */
const char *sched_class_name(const struct sched_class *class)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(sched_normal_choices); i++) {
		if (sched_normal_choices[i].class == class)
			return sched_normal_choices[i].name;
	}
#ifdef CONFIG_SMP
	if (class == &stop_sched_class)
		return "stop";
#endif
	if (class == &dl_sched_class)
		return "dl";
	if (class == &rt_sched_class)
		return "rt";
	if (class == &idle_sched_class)
		return "idle";
	return "unknown";
}

static int __init sched_class_setup(char *str)
{
	const struct sched_class_choice *choice = sched_class_lookup(str);
	char known[64];

	if (!choice) {
		sched_class_known_names(known, sizeof(known));
		/* An earlier valid sched= on the same command line still holds. */
		pr_warn("sched: unknown scheduler \"%s\" in sched= (known: %s), keeping %s\n",
			str ?: "", known, sched_normal_override >= 0 ?
			sched_normal_choices[sched_normal_override].name :
			CONFIG_SCHED_DEFAULT_NAME);
		return 0;
	}
	sched_normal_override = choice - sched_normal_choices;
	return 0;
}
early_param("sched", sched_class_setup);

/* Longest name kernel.sched_class takes, with its NUL. */
#define SCHED_CLASS_NAME_LEN	16

static const struct sched_class_choice *sched_normal_choice __read_mostly;

/* Serialises class switches and readers of the sysctl. */
static DEFINE_MUTEX(sched_class_switch_mutex);

/* Tell the classes involved that normal tasks moved. */
static void sched_class_switched(void)
{
#ifdef CONFIG_SCHED_ULE
	ule_normal_class_changed();
#endif
#ifdef CONFIG_SCHED_BMQ
	bmq_normal_class_changed();
#endif
}

/*
 * kernel.sched_class: reading gives the class of normal tasks; writing a
 * known name moves every normal task to that class (root only).
 */
static int sched_class_sysctl_handler(struct ctl_table *table, int write,
				      void *buffer, size_t *lenp, loff_t *ppos)
{
	const struct sched_class_choice *choice, *prev;
	char name[SCHED_CLASS_NAME_LEN] = "";
	struct ctl_table tmp = {
		.data	= name,
		.maxlen	= sizeof(name),
	};
	unsigned int moved;
	int ret;

	mutex_lock(&sched_class_switch_mutex);
	if (!write) {
		strscpy(name, sched_normal_choice->name, sizeof(name));
		ret = proc_dostring(&tmp, 0, buffer, lenp, ppos);
		goto unlock;
	}
	ret = proc_dostring(&tmp, 1, buffer, lenp, ppos);
	if (ret)
		goto unlock;
	choice = sched_class_lookup(name);
	if (!choice) {
		pr_warn_ratelimited("sched: unknown scheduler \"%s\" written to kernel.sched_class, keeping %s\n",
				    name, sched_normal_choice->name);
		ret = -EINVAL;
		goto unlock;
	}
	prev = sched_normal_choice;
	if (choice == prev)
		goto unlock;
	moved = sched_switch_normal_class(choice->class);
	sched_normal_choice = choice;
	sched_class_switched();
	pr_info("sched: normal tasks moved from %s to %s (%u tasks)\n",
		prev->name, choice->name, moved);
unlock:
	mutex_unlock(&sched_class_switch_mutex);
	return ret;
}

static struct ctl_table sched_class_sysctls[] = {
	{
		.procname	= "sched_class",
		.maxlen		= SCHED_CLASS_NAME_LEN,
		.mode		= 0644,
		.proc_handler	= sched_class_sysctl_handler,
	},
	{}
};

/**
 * sched_class_select_normal - the class that runs normal tasks
 *
 * Called once from sched_init(), after "sched=" was parsed and before the
 * first task is forked: "sched=" if given, else the Kconfig default.
 */
const struct sched_class * __init sched_class_select_normal(void)
{
	const struct sched_class_choice *choice;

	if (sched_normal_override >= 0)
		choice = &sched_normal_choices[sched_normal_override];
	else
		choice = sched_class_lookup(CONFIG_SCHED_DEFAULT_NAME);
	if (WARN_ON_ONCE(!choice))
		choice = &sched_normal_choices[0];
	sched_normal_choice = choice;
	return choice->class;
}

static int __init sched_class_select_init(void)
{
	const struct sched_class_choice *choice = sched_normal_choice;

	pr_info("sched: normal tasks run on %s (%s)\n", choice->name,
		sched_normal_override >= 0 ? "sched=" : "default");
	register_sysctl_init("kernel", sched_class_sysctls);
	return 0;
}
late_initcall(sched_class_select_init);

#ifdef CONFIG_SCHED_CLASS_SELECT_KUNIT_TEST
#include "class_select_test.c"
#endif
