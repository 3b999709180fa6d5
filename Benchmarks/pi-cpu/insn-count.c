/*
 * insn-count: a QEMU TCG plugin that counts the guest instructions a program executes, all
 * threads together, and writes the total when the program exits:
 *
 *     qemu-aarch64 -plugin ./libinsn-count.so,out=FILE PROGRAM ARGS...
 *
 * FILE gets one line, "instructions N". Debian ships QEMU's plugin support but not its
 * header (qemu-plugin.h), so the few declarations used are written out below, as QEMU 7.2's
 * plugin API version 1 defines them. Each translation block adds its instruction count to
 * one atomic counter when it runs: exact for a multithreaded program (an inline add would
 * race between the guest's threads), and slower, which only matters for wall time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t total;
static char *out_path;

static void executed(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    __atomic_fetch_add(&total, (uint64_t)(uintptr_t)userdata, __ATOMIC_RELAXED);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, executed, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
}

static void finished(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    FILE *f = fopen(out_path, "w");
    if (f == NULL) {
        perror(out_path);
        return;
    }
    fprintf(f, "instructions %llu\n", (unsigned long long)__atomic_load_n(&total, __ATOMIC_RELAXED));
    fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                              int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) out_path = strdup(argv[i] + 4);
    }
    if (out_path == NULL) {
        fprintf(stderr, "insn-count: give out=FILE\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    qemu_plugin_register_atexit_cb(id, finished, NULL);
    return 0;
}
