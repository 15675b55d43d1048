/* The `pulumi` of the generated workspaces (see FAKE_PULUMI in bench.py). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void append(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) { perror(path); exit(3); }
  size_t n = strlen(text);
  if (write(fd, text, n) != (ssize_t)n) { perror(path); exit(3); }
  close(fd);
}

/* A stack file gets the passphrase salt once, as the real CLI writes it. */
static void salted(const char *path) {
  FILE *f = fopen(path, "r");
  if (f) {
    char line[4096];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "encryptionsalt:", 15) == 0) { fclose(f); return; }
    fclose(f);
  }
  const char *salt = getenv("BENCH_SALT");
  char text[4096];
  snprintf(text, sizeof text, "encryptionsalt: %s\n", salt ? salt : "");
  append(path, text);
}

int main(int argc, char **argv) {
  static char line[65536];
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return 3;
  size_t at = snprintf(line, sizeof line, "%s", cwd);
  for (int i = 1; i < argc && at < sizeof line - 2; i++)
    at += snprintf(line + at, sizeof line - at, "\t%s", argv[i]);
  snprintf(line + at, sizeof line - at, "\n");
  const char *calls = getenv("BENCH_CALLS");
  if (calls) append(calls, line);
  const char *log = 0, *file = 0, *stack = 0;
  int create = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--create")) create = 1;
    if (i > 1 && !strcmp(argv[i - 1], "--event-log")) log = argv[i];
    if (i > 1 && !strcmp(argv[i - 1], "--config-file")) file = argv[i];
    if (i > 1 && !strcmp(argv[i - 1], "--stack")) stack = argv[i];
  }
  char own[4096];
  snprintf(own, sizeof own, "Pulumi.%s.yaml", stack ? stack : "");
  if (argc > 1 && !strcmp(argv[1], "up")) {
    FILE *f = fopen(".bench-seconds", "r");
    double s = 0;
    if (f) { if (fscanf(f, "%lf", &s) != 1) s = 0; fclose(f); }
    if (getenv("BENCH_NO_SLEEP") && *getenv("BENCH_NO_SLEEP")) s = 0;
    if (s > 0) {
      struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
      nanosleep(&t, 0);
    }
  } else if (argc > 2 && !strcmp(argv[1], "stack")) {
    if (!strcmp(argv[2], "output")) puts("{}");
    if (!strcmp(argv[2], "select") && create && access(own, F_OK) != 0) salted(own);
  } else if (argc > 2 && !strcmp(argv[1], "config") && !strcmp(argv[2], "set")) {
    salted(file ? file : own);
  }
  if (log) {
    FILE *f = fopen(log, "w");
    if (!f) { perror(log); return 3; }
    fputs("{\"sequence\":0,\"timestamp\":0,\"resOutputsEvent\":{\"metadata\":{\"op\":\"same\",\"urn\":\"\","
          "\"type\":\"pulumi:pulumi:Stack\",\"new\":{\"outputs\":{}}}}}\n"
          "{\"sequence\":1,\"timestamp\":0,\"summaryEvent\":{\"maybeCorrupt\":false,\"durationSeconds\":0,"
          "\"resourceChanges\":{\"same\":1},\"PolicyPacks\":{}}}\n"
          "{\"sequence\":2,\"timestamp\":0,\"cancelEvent\":{}}\n", f);
    fclose(f);
  }
  return 0;
}
