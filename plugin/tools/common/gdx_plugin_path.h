/* SPDX-License-Identifier: MIT */
#ifndef GDX_PLUGIN_PATH_H
#define GDX_PLUGIN_PATH_H

#include <stddef.h>

/*
 * The plugin the running program (gdx-bench, gdx-doctor) was built or
 * installed with: GDX_PLUGIN_FILE beside it in a build tree
 * (build/gdx-doctor, build/libnccl-net-gdx.so), in ../lib under an install
 * prefix (bin/, lib/), found from the program's own path (/proc/self/exe),
 * so that a DESTDIR or a moved tree still works. Its path, the directory
 * made absolute without its "..", into out (len bytes); 0, or -ENOENT when
 * neither is there to read.
 */
#define GDX_PLUGIN_FILE "libnccl-net-gdx.so"
int gdx_plugin_beside_self(char *out, size_t len);

#endif
