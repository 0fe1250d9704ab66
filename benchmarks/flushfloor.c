/*
 * flushfloor: the least a FUSE round trip per close(2) can cost on this machine.
 *
 * A read-only passthrough of a local directory in C (libfuse 3 low-level API, one thread),
 * in FUSE no-open mode like brainfs: OPEN and OPENDIR answer ENOSYS once, so the kernel
 * opens files itself, keeps their pages and sends one FLUSH per close. FLUSH is answered
 * at once with 0 (every close is a round trip, as with brainfs's commits at close), or,
 * with FLUSHFLOOR_ENOSYS set, with ENOSYS (the kernel then sends no FLUSH at all, as with
 * brainfs's --commit quiet or --read-only). benchmarks/grep_bench.py compiles it and mounts
 * it over the sample directory as the modes ``c-flush-warm`` and ``c-noflush-warm``.
 *
 * Usage: flushfloor SOURCE_DIR MOUNTPOINT   (stays in the foreground; stop with SIGTERM or
 * fusermount3 -u MOUNTPOINT)
 */
#define FUSE_USE_VERSION 34
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct node {
    dev_t dev;
    ino_t ino;
    int path_fd; /* O_PATH */
    int read_fd; /* opened at the first read, kept */
};

static struct node *nodes; /* nodes[0] unused, nodes[1] the root */
static size_t n_nodes, cap_nodes;
static int flush_enosys;
static const double TIMEOUT = 86400.0;

static fuse_ino_t find_or_add(int path_fd, const struct stat *st)
{
    /* Linear search is fine for a benchmark's few thousand files: lookups happen once,
     * then the kernel's dentry cache answers. */
    for (size_t i = 1; i < n_nodes; i++)
        if (nodes[i].dev == st->st_dev && nodes[i].ino == st->st_ino) {
            close(path_fd);
            return i;
        }
    if (n_nodes >= cap_nodes) {
        cap_nodes = cap_nodes ? cap_nodes * 2 : 4096;
        nodes = realloc(nodes, cap_nodes * sizeof *nodes);
        if (!nodes)
            abort();
    }
    nodes[n_nodes] = (struct node){st->st_dev, st->st_ino, path_fd, -1};
    return n_nodes++;
}

static int stat_of(fuse_ino_t ino, struct stat *st)
{
    if (ino >= n_nodes || fstatat(nodes[ino].path_fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
        return ENOENT;
    st->st_ino = ino;
    return 0;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    if (parent >= n_nodes) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    int fd = openat(nodes[parent].path_fd, name, O_PATH | O_NOFOLLOW);
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    if (fstatat(fd, "", &e.attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
        int err = errno;
        close(fd);
        fuse_reply_err(req, err);
        return;
    }
    e.ino = find_or_add(fd, &e.attr);
    e.attr.st_ino = e.ino;
    e.attr_timeout = e.entry_timeout = TIMEOUT;
    fuse_reply_entry(req, &e);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    struct stat st;
    int err = stat_of(ino, &st);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_attr(req, &st, TIMEOUT);
}

static void ll_no_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    (void)fi;
    fuse_reply_err(req, ENOSYS); /* no-open mode from here on */
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    if (ino >= n_nodes) {
        fuse_reply_err(req, EBADF);
        return;
    }
    struct node *n = &nodes[ino];
    if (n->read_fd < 0) {
        char p[64];
        snprintf(p, sizeof p, "/proc/self/fd/%d", n->path_fd);
        n->read_fd = open(p, O_RDONLY);
        if (n->read_fd < 0) {
            fuse_reply_err(req, errno);
            return;
        }
    }
    char *buf = malloc(size ? size : 1);
    ssize_t got = pread(n->read_fd, buf, size, off);
    if (got < 0)
        fuse_reply_err(req, errno);
    else
        fuse_reply_buf(req, buf, (size_t)got);
    free(buf);
}

static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    (void)fi;
    fuse_reply_err(req, flush_enosys ? ENOSYS : 0);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    if (ino >= n_nodes) {
        fuse_reply_err(req, EBADF);
        return;
    }
    int fd = openat(nodes[ino].path_fd, ".", O_RDONLY | O_DIRECTORY);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        fuse_reply_err(req, errno);
        if (fd >= 0)
            close(fd);
        return;
    }
    if (off)
        seekdir(d, off);
    char *buf = malloc(size);
    size_t used = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_ino = de->d_ino;
        st.st_mode = (mode_t)de->d_type << 12;
        size_t need = fuse_add_direntry(req, buf + used, size - used, de->d_name, &st, telldir(d));
        if (need > size - used)
            break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
    closedir(d);
}

static const struct fuse_lowlevel_ops ops = {
    .lookup = ll_lookup,
    .getattr = ll_getattr,
    .open = ll_no_open,
    .opendir = ll_no_open,
    .read = ll_read,
    .flush = ll_flush,
    .readdir = ll_readdir,
};

int main(int argc, char *argv[])
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s SOURCE_DIR MOUNTPOINT\n", argv[0]);
        return 2;
    }
    flush_enosys = getenv("FLUSHFLOOR_ENOSYS") != NULL;
    struct stat st;
    int root = open(argv[1], O_PATH | O_DIRECTORY);
    if (root < 0 || fstat(root, &st)) {
        perror(argv[1]);
        return 1;
    }
    n_nodes = 1;
    find_or_add(root, &st); /* ino 1 */
    char *fargv[] = {argv[0], "-o", "ro,default_permissions,fsname=flushfloor", NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
    if (!se || fuse_set_signal_handlers(se) || fuse_session_mount(se, argv[2]))
        return 1;
    int rc = fuse_session_loop(se);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    return rc ? 1 : 0;
}
