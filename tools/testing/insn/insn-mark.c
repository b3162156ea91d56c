// SPDX-License-Identifier: GPL-2.0
/*
 * insn-mark: set the markers of the insncount QEMU plugin
 * (tools/testing/insn/insncount.c) from a guest.
 *
 *   insn-mark start           open a window: every vCPU's counts from zero
 *   insn-mark stop [LABEL]    close it; print the plugin's line for it
 *   insn-mark run [LABEL] -- COMMAND...
 *                             COMMAND between a start and a stop
 *   insn-mark maps FILE -- COMMAND...
 *                             run COMMAND, and copy its /proc/PID/maps
 *                             to FILE as it exits (for insn-profile)
 *
 * The plugin appends one JSON line per window to a file of the host's that
 * rmsg-vm names in RMSG_INSN_OUT (a path in the repository, which the guest
 * shares): stop prints that line, with "label" added when given. The plugin
 * writes it while the marker instruction executes, so it is there when
 * stop reads it. Without the plugin the markers do nothing and stop fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
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

static int copy_maps(pid_t pid, const char *file)
{
	char path[64], buf[65536];
	int in, out, ok = 1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	in = open(path, O_RDONLY | O_CLOEXEC);
	out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in < 0 || out < 0) {
		perror(in < 0 ? path : file);
		ok = 0;
	}
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ok = 0;
	return ok ? 0 : -1;
}

/*
 * maps FILE -- COMMAND: the address space of COMMAND as it ends, for
 * tools/testing/insn-profile to name the functions at the addresses the
 * plugin counted. At its exit the process has every library it loaded
 * still mapped: COMMAND runs traced (PTRACE_TRACEME), and the tracer
 * stops it only at its execs and at the start of its exit
 * (PTRACE_O_TRACEEXIT, before the kernel drops its memory), so that its
 * cost is the same for any length of run. Its threads are not traced;
 * signals it receives are passed on; if this process dies, so does
 * COMMAND (PTRACE_O_EXITKILL: timeout(1) kills the wrapper). Exits with
 * COMMAND's status, as run does.
 */
static int run_maps(const char *file, char **argv)
{
	int status, sig = 0, copied = -1;
	bool armed = false;
	siginfo_t si;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
			perror("insn-mark: ptrace");
			_exit(127);
		}
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (pid < 0) {
		perror("insn-mark: fork");
		return 1;
	}
	for (;;) {
		if (waitpid(pid, &status, 0) < 0) {
			if (errno == EINTR)
				continue;
			perror("insn-mark: waitpid");
			return 1;
		}
		if (!WIFSTOPPED(status))
			break;
		sig = WSTOPSIG(status);
		if (status >> 8 == (SIGTRAP | PTRACE_EVENT_EXIT << 8)) {
			copied = copy_maps(pid, file);
			sig = 0;
		} else if (status >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8)) {
			/* A further exec (COMMAND may be a script). */
			sig = 0;
		} else if (sig == SIGTRAP && !armed) {
			/*
			 * The stop after the first exec: ask for the exit's,
			 * and for further execs as events, not SIGTRAPs.
			 */
			ptrace(PTRACE_SETOPTIONS, pid, NULL,
			       (void *)(long)(PTRACE_O_TRACEEXIT |
					      PTRACE_O_TRACEEXEC |
					      PTRACE_O_EXITKILL));
			armed = true;
			sig = 0;
		} else if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si)) {
			/* A group stop, not a signal to pass on. */
			sig = 0;
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
	if (copied)
		fprintf(stderr, "insn-mark: no maps of %s in %s\n", argv[0],
			file);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static int usage(void)
{
	fprintf(stderr, "usage: insn-mark start | stop [LABEL] | run [LABEL] -- COMMAND...\n"
		"       insn-mark maps FILE -- COMMAND...\n");
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
	if (!strcmp(argv[1], "maps")) {
		if (argc < 5 || strcmp(argv[3], "--"))
			return usage();
		return run_maps(argv[2], argv + 4);
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
