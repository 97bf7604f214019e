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
