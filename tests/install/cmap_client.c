/* Built against the installed drop-in Corosync headers and libcmap/libquorum (pkg-config), as a
 * Corosync program is: writes a key, reads it back, and asks whether a quorum provider runs. */
#include <corosync/cmap.h>
#include <corosync/quorum.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  cmap_handle_t cmap;
  quorum_handle_t quorum;
  uint32_t quorum_type = 99;
  char *value = NULL;
  cs_error_t err = cmap_initialize(&cmap);
  if (err != CS_OK) {
    fprintf(stderr, "cmap_initialize: %s\n", cs_strerror(err));
    return 1;
  }
  if ((err = cmap_set_string(cmap, "app.install", "checked")) != CS_OK ||
      (err = cmap_get_string(cmap, "app.install", &value)) != CS_OK) {
    fprintf(stderr, "cmap set/get: %s\n", cs_strerror(err));
    return 1;
  }
  if (strcmp(value, "checked") != 0) {
    fprintf(stderr, "cmap_get_string gave '%s'\n", value);
    return 1;
  }
  free(value);
  cmap_finalize(cmap);
  if ((err = quorum_initialize(&quorum, NULL, &quorum_type)) != CS_OK || quorum_type != QUORUM_FREE) {
    fprintf(stderr, "quorum_initialize: %s, type %u (no quorum { } here: QUORUM_FREE)\n", cs_strerror(err),
            quorum_type);
    return 1;
  }
  quorum_finalize(quorum);
  return 0;
}
