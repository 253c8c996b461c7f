/* Built against an installed librtotem (pkg-config) as plain C: the header is C, the library
 * links, and a client joins, multicasts and delivers its own message through a live rtotemd. */
#define _DEFAULT_SOURCE /* usleep */
#include <rtotem/rtotem.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int delivered;

static void on_deliver(rtotem_t *h, const struct rtotem_message *m, void *ctx) {
  (void)h;
  (void)ctx;
  if (m->len == 5 && memcmp(m->data, "hello", 5) == 0 && m->pid == (uint32_t)getpid()) delivered = 1;
}

int main(int argc, char **argv) {
  const struct rtotem_callbacks cb = {on_deliver, NULL, NULL};
  rtotem_t *h = NULL;
  int rc = -EAGAIN;
  for (int tries = 0; tries < 200 && (rc == -EAGAIN || rc == -ECONNREFUSED || rc == -ENOENT); ++tries) {
    rc = rtotem_connect(&h, argc > 1 ? argv[1] : NULL, &cb, NULL);
    if (rc != 0) usleep(50000);
  }
  if (rc != 0) {
    fprintf(stderr, "client_c: connect: %s\n", rtotem_strerror(rc));
    return 1;
  }
  uint32_t nodeid = 0;
  if ((rc = rtotem_local_nodeid(h, &nodeid)) != 0 || (rc = rtotem_join(h, "install-check")) != 0 ||
      (rc = rtotem_mcast(h, "install-check", "hello", 5, RTOTEM_SAFE)) != 0) {
    fprintf(stderr, "client_c: %s\n", rtotem_strerror(rc));
    return 1;
  }
  for (int i = 0; i < 100 && !delivered; ++i) {
    if ((rc = rtotem_dispatch(h, RTOTEM_DISPATCH_ALL)) < 0) break;
    usleep(20000);
  }
  rtotem_disconnect(h);
  printf("client_c: node %u, own message %s\n", (unsigned)nodeid, delivered ? "delivered" : "NOT delivered");
  return delivered ? 0 : 1;
}
