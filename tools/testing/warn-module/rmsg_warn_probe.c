// SPDX-License-Identifier: GPL-2.0
/*
 * A module that only raises a kernel warning when loaded. `make check` loads
 * it in a guest of its own to prove that rmsg-vm turns a WARN red; it is not
 * part of rmsg.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init rmsg_warn_probe_init(void)
{
	WARN(1, "rmsg_warn_probe: deliberate warning\n");
	return 0;
}

static void __exit rmsg_warn_probe_exit(void)
{
}

module_init(rmsg_warn_probe_init);
module_exit(rmsg_warn_probe_exit);
MODULE_DESCRIPTION("rmsg test bed self-check: raises one warning");
MODULE_LICENSE("GPL");
