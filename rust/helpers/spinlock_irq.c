// SPDX-License-Identifier: GPL-2.0

#include <linux/bug.h>
#include <linux/irqflags.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/spinlock.h>

/*
 * Interrupt disabling that nests by count rather than by saved flags, for the
 * guards of Rust's IrqSpinLock: guards may be dropped in any order, and
 * interrupts come back on only when the last one on the CPU goes (with the
 * state the first one found). Saved flags, as spin_lock_irqsave() keeps them,
 * would re-enable interrupts while an inner lock is still held if the outer
 * guard were dropped first. This is the design of the counted
 * local_interrupt_disable() proposed upstream for Rust's SpinLockIrq.
 *
 * On PREEMPT_RT a spinlock_t is a sleeping lock and interrupt handlers run in
 * threads: spin_lock_irq() and the proposed spin_lock_irq_disable() are
 * spin_lock() there, and spin_lock() after local_irq_save() would be invalid.
 * So is this.
 */
#ifndef CONFIG_PREEMPT_RT
struct rust_irq_nested {
	unsigned int depth;
	unsigned long flags;
};
static DEFINE_PER_CPU(struct rust_irq_nested, rust_irq_nested);
#endif

/* Returns the CPU the lock was taken on, for the unlock's check. */
unsigned int rust_helper_spin_lock_irq_nested(spinlock_t *lock)
{
#ifdef CONFIG_PREEMPT_RT
	spin_lock(lock);
	return 0;
#else
	unsigned long flags;

	local_irq_save(flags);
	if (this_cpu_inc_return(rust_irq_nested.depth) == 1)
		this_cpu_write(rust_irq_nested.flags, flags);
	spin_lock(lock);
	return smp_processor_id();
#endif
}

void rust_helper_spin_unlock_irq_nested(spinlock_t *lock, unsigned int cpu)
{
	spin_unlock(lock);
#ifndef CONFIG_PREEMPT_RT
	/*
	 * Interrupts are off since the lock was taken, so the holder stayed on
	 * this CPU unless it slept under the lock (a bug, which might_sleep()
	 * reports with CONFIG_DEBUG_ATOMIC_SLEEP). If it did, this CPU's count
	 * is not this guard's: leave it, and the interrupt state, alone rather
	 * than wrap it. The first CPU's count stays raised (no other CPU can
	 * change it safely), so interrupts stay off there after its next guard:
	 * the warning reports a bug the system does not recover from.
	 */
	if (WARN_ONCE(cpu != smp_processor_id() ||
			      !this_cpu_read(rust_irq_nested.depth),
		      "IrqSpinLock released on CPU %u, taken on CPU %u: its holder slept\n",
		      smp_processor_id(), cpu))
		return;
	if (this_cpu_dec_return(rust_irq_nested.depth) == 0)
		local_irq_restore(this_cpu_read(rust_irq_nested.flags));
#endif
}

bool rust_helper_irqs_disabled(void)
{
	return irqs_disabled();
}
