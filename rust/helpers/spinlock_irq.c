// SPDX-License-Identifier: GPL-2.0

#include <linux/irqflags.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>

/*
 * Interrupt disabling that nests by count rather than by saved flags, for the
 * guards of Rust's IrqSpinLock: guards may be dropped in any order, and
 * interrupts come back on only when the last one on the CPU goes (with the
 * state the first one found). Saved flags, as spin_lock_irqsave() keeps them,
 * would re-enable interrupts while an inner lock is still held if the outer
 * guard were dropped first.
 */
static DEFINE_PER_CPU(unsigned int, rust_irq_disable_depth);
static DEFINE_PER_CPU(unsigned long, rust_irq_disable_flags);

void rust_helper_spin_lock_irq_nested(spinlock_t *lock)
{
	unsigned long flags;

	local_irq_save(flags);
	if (this_cpu_inc_return(rust_irq_disable_depth) == 1)
		this_cpu_write(rust_irq_disable_flags, flags);
	spin_lock(lock);
}

void rust_helper_spin_unlock_irq_nested(spinlock_t *lock)
{
	spin_unlock(lock);
	/* Interrupts are off, so this CPU's count is ours until restored. */
	if (this_cpu_dec_return(rust_irq_disable_depth) == 0)
		local_irq_restore(this_cpu_read(rust_irq_disable_flags));
}

bool rust_helper_irqs_disabled(void)
{
	return irqs_disabled();
}
