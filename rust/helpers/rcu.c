// SPDX-License-Identifier: GPL-2.0

#include <linux/rcupdate.h>
#include <linux/wait_bit.h>

void rust_helper_rcu_read_lock(void)
{
	rcu_read_lock();
}

void rust_helper_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

/*
 * Before Rust waits for a grace period or for RCU callbacks
 * (rcu::barrier(), rcu::synchronize()): inside a read-side section that wait
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

/*
 * For the module exit of Rust code (rcu::wait_for_orphans()): waits until the
 * count of objects that dropped Rcus left to their callbacks is zero. Rust
 * decrements it and calls wake_up_var() on its address.
 */
void rust_helper_wait_var_event_zero(unsigned long *count)
{
	wait_var_event(count, READ_ONCE(*count) == 0);
}
