// SPDX-License-Identifier: GPL-2.0

#include <linux/rcupdate.h>

void rust_helper_rcu_read_lock(void)
{
	rcu_read_lock();
}

void rust_helper_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

/* For an Rcu's drop, which may wait for RCU callbacks: its context is checked every time. */
void rust_helper_might_sleep(void)
{
	might_sleep();
}

/*
 * Before Rust waits for a grace period or for RCU callbacks (an Rcu's drop,
 * rcu::barrier(), rcu::synchronize()): inside a read-side section that wait
 * would end the grace period under a live reference, or, with preemptible
 * RCU, never end. Reported with lockdep's RCU checking (CONFIG_PROVE_RCU),
 * and by might_sleep() where a section disables preemption.
 */
void rust_helper_rcu_wait_check(void)
{
	RCU_LOCKDEP_WARN(rcu_read_lock_any_held(),
			 "Rust RCU wait inside an RCU read-side critical section");
	might_sleep();
}
