// SPDX-License-Identifier: GPL-2.0
/*
 * Run a fuzz target over files without libFuzzer: each argument is a file
 * or a directory of files (one level), each file one input. This is how
 * `make unit` keeps replaying the committed seed corpus with the ordinary
 * compiler. A broken invariant aborts, so the exit status says it all.
 * FUZZ_NAME and FUZZ_CORPUS come from the Makefile.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	static uint8_t buf[1 << 20];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		perror(path);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/* Files of @dir in name order, so runs are repeatable. */
static int run_dir(const char *dir, unsigned int *count)
{
	char **names = NULL, path[4096];
	size_t n = 0, i;
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names)
			return -1;
		names[n] = strdup(de->d_name);
		if (!names[n++])
			return -1;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (run_file(path))
			ret = -1;
		else
			(*count)++;
		free(names[i]);
	}
	free(names);
	return ret;
}

/* One argument: a file or a directory of them. */
static int run_arg(const char *path, unsigned int *count)
{
	struct stat st;

	if (stat(path, &st)) {
		perror(path);
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return run_dir(path, count);
	if (run_file(path))
		return -1;
	(*count)++;
	return 0;
}

/*
 * With no arguments, the target's committed corpus (FUZZ_CORPUS, relative
 * to the top of the tree), reported as one KTAP test; an input that breaks
 * an invariant aborts before the result, which counts as a failure.
 */
int main(int argc, char **argv)
{
	unsigned int count = 0;
	int i, ret = 0;

	printf("TAP version 13\n1..1\n");
	fflush(stdout);
	if (argc < 2)
		ret = run_arg(FUZZ_CORPUS, &count);
	for (i = 1; i < argc; i++)
		if (run_arg(argv[i], &count))
			ret = -1;
	ret = ret || !count;
	printf("%sok 1 fuzz_%s.replay # %u inputs\n", ret ? "not " : "",
	       FUZZ_NAME, count);
	return ret;
}
