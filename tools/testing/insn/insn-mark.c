// SPDX-License-Identifier: GPL-2.0
/*
 * insn-mark: set the markers of the insncount QEMU plugin
 * (tools/testing/insn/insncount.c) from a guest.
 *
 *   insn-mark start           open a window: every vCPU's counts from zero
 *   insn-mark stop [LABEL]    close it; print the plugin's line for it
 *   insn-mark run [LABEL] -- COMMAND...
 *                             COMMAND between a start and a stop
 *
 * The plugin appends one JSON line per window to a file of the host's that
 * rmsg-vm names in RMSG_INSN_OUT (a path in the repository, which the guest
 * shares): stop prints that line, with "label" added when given. The plugin
 * writes it while the marker instruction executes, so it is there when
 * stop reads it. Without the plugin the markers do nothing and stop fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void mark_start(void)
{
	__asm__ volatile("xchg %%cx, %%cx" ::: "memory");
}

static void mark_stop(void)
{
	__asm__ volatile("xchg %%dx, %%dx" ::: "memory");
}

/* The last window line of the plugin's file, as it is now. */
static int print_window(const char *label)
{
	const char *path = getenv("RMSG_INSN_OUT");
	char line[8192], last[8192] = "";
	FILE *f;

	if (!path || !*path) {
		fprintf(stderr, "insn-mark: no RMSG_INSN_OUT (rmsg-vm without --insn?)\n");
		return 1;
	}
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "{\"window\": ", 11))
			strcpy(last, line);
	fclose(f);
	if (!*last) {
		fprintf(stderr, "insn-mark: %s has no window\n", path);
		return 1;
	}
	if (label)
		printf("{\"label\": \"%s\", %s", label, last + 1);
	else
		fputs(last, stdout);
	return fflush(stdout) ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: insn-mark start | stop [LABEL] | run [LABEL] -- COMMAND...\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *label = NULL;
	int status, i;
	pid_t pid;

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "start") && argc == 2) {
		mark_start();
		return 0;
	}
	if (!strcmp(argv[1], "stop") && argc <= 3) {
		mark_stop();
		return print_window(argc == 3 ? argv[2] : NULL);
	}
	if (strcmp(argv[1], "run"))
		return usage();
	for (i = 2; i < argc && strcmp(argv[i], "--"); i++)
		label = argv[i];
	if (i + 1 >= argc || i > 3)
		return usage();
	fflush(stdout);
	mark_start();
	pid = fork();
	if (pid == 0) {
		execvp(argv[i + 1], argv + i + 1);
		perror(argv[i + 1]);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		mark_stop();
		perror("insn-mark");
		return 1;
	}
	mark_stop();
	if (print_window(label))
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
