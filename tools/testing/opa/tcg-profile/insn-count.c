// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions executed in every
 * translation block between two executions of a marker address, so that a
 * guest can say "count from here" and "stop here" by calling a kernel
 * function nothing else calls while it runs (make profile uses ksys_sync(),
 * the sync(2) system call). Each stop writes one file, OUT.0, OUT.1, ...,
 * with a line per block that ran: "<guest address> <instructions> <runs>".
 *
 * Instruction counts, unlike time, do not depend on the host's load, and
 * under TCG they are most of what a guest's time is.
 *
 * Usage: -plugin insn-count.so,marker=<hex address>,out=<path prefix>
 *
 * QEMU's plugin API is version 1 in QEMU 7.2 (Debian 12), whose
 * qemu-plugin.h is next to this file.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* One translation of a block: blocks are translated again after a flush. */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t runs; /* added to by the vCPUs, inline, without a lock */
	struct block *next;
};

static struct block *blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t marker;
static int counting;
static int windows;
static char out[4096] = "insn-count";

static void write_window(void)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%d", out, windows++);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	for (struct block *b = blocks; b; b = b->next)
		if (b->runs)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				b->vaddr, b->insns, b->runs);
	fclose(f);
}

/* The marker ran: start a window (from zero) or end one (write it). */
static void on_marker(unsigned int vcpu, void *udata)
{
	pthread_mutex_lock(&lock);
	if (counting) {
		write_window();
	} else {
		for (struct block *b = blocks; b; b = b->next)
			b->runs = 0;
	}
	counting = !counting;
	pthread_mutex_unlock(&lock);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		return;
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->runs, 1);
	if (b->vaddr == marker)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_marker,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "marker=", 7))
			marker = strtoull(argv[i] + 7, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			snprintf(out, sizeof(out), "%s", argv[i] + 4);
		else {
			fprintf(stderr, "insn-count: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!marker) {
		fprintf(stderr, "insn-count: marker=<hex address> is required\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
