/* rusage_exec OUT -- PROGRAM [ARGS...]: run PROGRAM, wait for it, write its own rusage to OUT as
 * one JSON object {"rc", "signal", "maxrss_kb", "utime", "stime"}, and exit with its status.
 *
 * Why not measure from the harness directly: a child's ru_maxrss is the high-water mark of every
 * address space it had, and the first is a copy of its parent's (fork), whose resident set at that
 * moment counts.  A Python harness that has imported pyarrow is ~100 MB resident, which would be
 * every child's "peak RSS".  This launcher is a few hundred KB when it forks, so the figure it
 * reports is the program's own. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 4 || strcmp(argv[2], "--") != 0) {
    fprintf(stderr, "usage: rusage_exec OUT -- PROGRAM [ARGS...]\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "rusage_exec: fork: %s\n", strerror(errno));
    return 1;
  }
  if (pid == 0) {
    execvp(argv[3], argv + 3);
    fprintf(stderr, "rusage_exec: %s: %s\n", argv[3], strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      fprintf(stderr, "rusage_exec: wait4: %s\n", strerror(errno));
      return 1;
    }
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  FILE *f = fopen(argv[1], "w");
  if (!f) {
    fprintf(stderr, "rusage_exec: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  fprintf(f, "{\"rc\":%d,\"signal\":%d,\"maxrss_kb\":%ld,\"utime\":%.6f,\"stime\":%.6f}\n", rc,
          WIFSIGNALED(status) ? WTERMSIG(status) : 0, ru.ru_maxrss,
          (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
          (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6);
  fclose(f);
  return rc;
}
