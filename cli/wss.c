/* The `wss` command.  `wss run` launches a program under libwss.so: it
 * validates its flags with the library's own rules, turns them into the
 * WSS_<SECTION>_<KEY> environment variables the library reads, preloads the
 * libwss.so that belongs to this wss, and passes the program's exit status
 * through (128+N when it dies of signal N).  Usage errors exit 2 before the
 * program runs.  The command never links the preload. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"

#define EXIT_USAGE 2
#define EXIT_NOEXEC 126
#define EXIT_NOTFOUND 127

static void usage(FILE *to)
{
	fputs("usage: wss run [-o PATH] [--interval DUR] [--window DUR] [--time-base wall|cpu|manual] -- PROG [ARGS...]\n"
	      "       wss --version | --help\n"
	      "\n"
	      "Measures the working set of PROG (no recompilation, no root) and writes a\n"
	      "JSON Lines profile, by default wss.<pid>.jsonl in the current directory.\n"
	      "  -o, --output PATH     profile path; %p is the pid, %n the program name\n"
	      "  --interval DUR        sampling interval (default 100ms); DUR: 500us, 10ms, 2s\n"
	      "  --window DUR          working-set window, a whole multiple of the interval\n"
	      "                        (default: one interval)\n"
	      "  --time-base BASE      wall (default), cpu (process CPU time), or manual\n"
	      "                        (the program calls wss_tick())\n",
	      to);
}

static int die_usage(const char *a, const char *b)
{
	fprintf(stderr, "wss: %s%s\n", a, b ? b : "");
	fputs("wss: try 'wss --help'\n", stderr);
	return EXIT_USAGE;
}

/* The libwss.so that belongs to this wss: next to an in-tree build, else
 * the one installed in the configured libdir. */
static int find_library(char *out, size_t n)
{
	char self[PATH_MAX - 32];
	ssize_t r = readlink("/proc/self/exe", self, sizeof self - 1);
	if (r > 0) {
		self[r] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, n, "%s/.libs/libwss.so", self);
			if (strcmp(self, WSS_BINDIR) != 0 && access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, n, "%s/libwss.so", WSS_LIBDIR);
	return access(out, R_OK) == 0 ? 0 : ENOENT;
}

static const char *flag_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int cmd_run(int argc, char **argv)
{
	const char *output = NULL, *interval = NULL, *window = NULL, *time_base = NULL;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		const char *name = NULL;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "-o") || !strncmp(a, "--output", 8))
			slot = &output, name = a[1] == 'o' ? "-o" : "--output";
		else if (!strncmp(a, "--interval", 10))
			slot = &interval, name = "--interval";
		else if (!strncmp(a, "--window", 8))
			slot = &window, name = "--window";
		else if (!strncmp(a, "--time-base", 11))
			slot = &time_base, name = "--time-base";
		if (!slot || (a[strlen(name)] != '\0' && a[strlen(name)] != '='))
			return die_usage("run: unknown option ", a);
		const char *v = flag_value(argc, argv, &i, name);
		if (!v)
			return die_usage("run: missing value for ", name);
		*slot = v;
	}
	if (i >= argc)
		return die_usage("run: no program given (wss run [options] -- PROG [ARGS...])", NULL);

	/* Validate exactly as the library will: environment first, flags on top. */
	wss_config_t cfg;
	char err[512];
	extern char **environ;
	wss_config_defaults(&cfg);
	if (wss_config_from_env(&cfg, environ, err, sizeof err))
		return die_usage(err, NULL);
	uint64_t ns;
	if (interval) {
		if (wss_dur_parse(interval, &ns))
			return die_usage("run: --interval: not a duration (e.g. 100ms): ", interval);
		cfg.interval_ns = ns;
		if (!window && cfg.src_window == WSS_SRC_DEFAULT)
			cfg.window_ns = 0;
	}
	if (window) {
		if (wss_dur_parse(window, &ns))
			return die_usage("run: --window: not a duration (e.g. 300ms): ", window);
		cfg.window_ns = ns;
	}
	if (time_base && wss_time_base_parse(time_base, &cfg.time_base))
		return die_usage("run: --time-base: expected wall, cpu or manual, got ", time_base);
	if (output) {
		if (!*output || strlen(output) >= sizeof cfg.output)
			return die_usage("run: -o: ", *output ? "path too long" : "empty path");
		char probe[WSS_OUTPUT_MAX];
		if (wss_output_expand(output, 1, "prog", probe, sizeof probe))
			return die_usage("run: -o: unknown %-sequence (use %p, %n or %%) in ", output);
		if (!strchr(output, '%')) {
			struct stat st;
			if (lstat(output, &st) == 0) {
				fprintf(stderr, "wss: %s: %s\n", output,
					S_ISDIR(st.st_mode)   ? "is a directory (-o names the profile file)"
					: S_ISLNK(st.st_mode) ? "is a symbolic link (wss never writes through one)"
							      : "File exists (wss never overwrites a profile)");
				return EXIT_USAGE;
			}
		}
		char dir[WSS_OUTPUT_MAX];
		snprintf(dir, sizeof dir, "%s", output);
		char *slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir ? 1 : 0] = '\0';
		else
			strcpy(dir, ".");
		if (access(dir, W_OK | X_OK)) {
			fprintf(stderr, "wss: %s: %s\n", dir, errno == ENOENT ? "No such directory" : "directory not writable");
			return EXIT_USAGE;
		}
	}
	if (wss_config_validate(&cfg, err, sizeof err))
		return die_usage("run: ", err);

	char lib[PATH_MAX];
	if (find_library(lib, sizeof lib)) {
		fprintf(stderr, "wss: cannot find libwss.so (looked in the build tree and %s)\n", WSS_LIBDIR);
		return EXIT_USAGE;
	}
	const char *old = getenv("LD_PRELOAD");
	char *preload = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
	if (!preload) {
		perror("wss");
		return 1;
	}
	sprintf(preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	if (output)
		setenv("WSS_SESSION_OUTPUT", output, 1);
	if (interval)
		setenv("WSS_SESSION_INTERVAL", interval, 1);
	if (window)
		setenv("WSS_SESSION_WINDOW", window, 1);
	if (time_base)
		setenv("WSS_SESSION_TIME_BASE", time_base, 1);

	/* Terminal signals reach the program through its process group; we
	 * ignore them while waiting (like system(3)) and forward the ones sent
	 * to us alone. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	child = fork();
	if (child < 0) {
		perror("wss: fork");
		return 1;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[i], &argv[i]);
		int e = errno;
		fprintf(stderr, "wss: %s: %s\n", argv[i], strerror(e));
		_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	struct sigaction fw;
	memset(&fw, 0, sizeof fw);
	fw.sa_handler = forward;
	int fsigs[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH};
	for (size_t k = 0; k < sizeof fsigs / sizeof *fsigs; k++)
		sigaction(fsigs[k], &fw, NULL);
	int st;
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR) {
			perror("wss: waitpid");
			return 1;
		}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("wss " PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	return die_usage("unknown command: ", argv[1]);
}
