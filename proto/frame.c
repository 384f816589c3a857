/*
 * frame.c — the client protocol's framing (docs/protocol.md §2–§3), shared
 * by storm-mm and stormctl so that both ends agree byte for byte.
 *
 * A frame is a fixed 12-byte header ("STRM", version, type, a zero u16, a
 * big-endian payload length) and the payload.  The header is read field by
 * field and checked before a single payload byte is allocated: a bad magic,
 * version, type, reserved field or a length over ST_FRAME_MAX is one
 * -STORM_EPROTO, so a confused or hostile peer can never make us allocate
 * more than ST_FRAME_MAX + 1 bytes.  st_frame_recv() either hands back a
 * whole frame or nothing: its out-parameters are written only on success.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <storm_proto.h>

#define OUTPUT_HDR 9 /* job u32, rank u32, stream u8 */

/* ---- byte order helpers (explicit, never a cast struct) ----------------- */

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int type_valid(int type)
{
	return type >= ST_FRAME_REQUEST && type <= ST_FRAME_STDIN;
}

/* ---- header ------------------------------------------------------------- */

int st_frame_parse_hdr(const uint8_t *hdr, int *type, uint32_t *len)
{
	uint32_t n;

	if (!hdr || !type || !len)
		return -EINVAL;
	if (memcmp(hdr, ST_FRAME_MAGIC, 4) != 0)
		return -STORM_EPROTO;
	if (hdr[4] != ST_FRAME_VERSION)
		return -STORM_EPROTO;
	if (!type_valid(hdr[5]))
		return -STORM_EPROTO;
	/* Reserved: zero now, so a later version may give it a meaning. */
	if (hdr[6] != 0 || hdr[7] != 0)
		return -STORM_EPROTO;
	n = get_be32(hdr + 8);
	if (n > ST_FRAME_MAX)
		return -STORM_EPROTO;
	*type = hdr[5];
	*len = n;
	return 0;
}

void st_frame_put_hdr(uint8_t *hdr, int type, uint32_t len)
{
	memcpy(hdr, ST_FRAME_MAGIC, 4);
	hdr[4] = ST_FRAME_VERSION;
	hdr[5] = (uint8_t)type;
	hdr[6] = 0;
	hdr[7] = 0;
	put_be32(hdr + 8, len);
}

/* ---- send --------------------------------------------------------------- */

/* Wait until fd can take more bytes: only reached when a caller handed us a
 * non-blocking socket (storm-mm's loop does), where "blocking helper" still
 * has to mean the whole frame goes out. */
static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int rc;

	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	return 0;
}

int st_frame_send(int fd, int type, const void *payload, uint32_t len)
{
	uint8_t hdr[ST_FRAME_HDR];
	struct iovec iov[2];
	struct msghdr msg;
	int niov = 2, is_socket = 1;

	if (fd < 0 || !type_valid(type) || (len && !payload))
		return -EINVAL;
	if (len > ST_FRAME_MAX)
		return -EMSGSIZE;
	st_frame_put_hdr(hdr, type, len);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = len;

	while (niov > 0) {
		ssize_t n;

		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov + (2 - niov);
		msg.msg_iovlen = (size_t)niov;
		/* MSG_NOSIGNAL: a client that went away is an error to
		 * return, not a SIGPIPE that kills the manager. */
		if (is_socket)
			n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		else
			n = writev(fd, msg.msg_iov, niov);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOTSOCK && is_socket) {
				is_socket = 0; /* a pipe, in tests */
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				int rc = wait_fd(fd, POLLOUT, -1);

				if (rc < 0)
					return rc;
				continue;
			}
			if (errno == EPIPE)
				return -ECONNRESET;
			return -errno;
		}
		/* Advance over what went out; a partial write leaves the
		 * rest of the current iovec for the next round. */
		while (niov > 0 && n > 0) {
			struct iovec *v = &iov[2 - niov];

			if ((size_t)n >= v->iov_len) {
				n -= (ssize_t)v->iov_len;
				v->iov_len = 0;
				niov--;
			} else {
				v->iov_base = (uint8_t *)v->iov_base + n;
				v->iov_len -= (size_t)n;
				n = 0;
			}
		}
		while (niov > 0 && iov[2 - niov].iov_len == 0)
			niov--;
	}
	return 0;
}

/* ---- receive ------------------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly len bytes into buf before deadline (-1: none).  *got counts
 * what arrived so the caller can tell a clean EOF from a torn frame. */
static int read_full(int fd, uint8_t *buf, size_t len, int64_t deadline,
		     size_t *got)
{
	while (*got < len) {
		int wait = -1, rc;
		ssize_t n;

		if (deadline >= 0) {
			int64_t left = deadline - now_ms();

			wait = left > 0 ? (int)(left > 1 << 30 ? 1 << 30 : left)
					: 0;
		}
		rc = wait_fd(fd, POLLIN, wait);
		if (rc < 0)
			return rc;
		n = read(fd, buf + *got, len - *got);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		*got += (size_t)n;
	}
	return 0;
}

int st_frame_recv(int fd, int timeout_ms, int *type, uint8_t **payload,
		  uint32_t *len)
{
	uint8_t hdr[ST_FRAME_HDR];
	int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
	size_t got = 0;
	uint8_t *buf;
	uint32_t n;
	int t, rc;

	if (fd < 0 || !type || !payload || !len)
		return -EINVAL;
	rc = read_full(fd, hdr, sizeof(hdr), deadline, &got);
	if (rc == -ECONNRESET && got > 0)
		return -STORM_EPROTO; /* the peer closed mid-header */
	if (rc < 0)
		return rc;
	rc = st_frame_parse_hdr(hdr, &t, &n);
	if (rc < 0)
		return rc;
	buf = malloc((size_t)n + 1);
	if (!buf)
		return -ENOMEM;
	got = 0;
	rc = read_full(fd, buf, n, deadline, &got);
	if (rc < 0) {
		free(buf);
		return rc == -ECONNRESET ? -STORM_EPROTO : rc;
	}
	buf[n] = '\0'; /* JSON payloads can go straight to a parser */
	*type = t;
	*payload = buf;
	*len = n;
	return 0;
}

/* ---- output payload ----------------------------------------------------- */

int st_output_encode(uint8_t *buf, size_t cap, uint32_t job, uint32_t rank,
		     int stream, const void *data, size_t len)
{
	if (!buf || (len && !data) || (stream != 1 && stream != 2))
		return -EINVAL;
	/* The result must fit both the int we return and one frame. */
	if (len > ST_FRAME_MAX - OUTPUT_HDR || cap < OUTPUT_HDR + len)
		return -ENOSPC;
	put_be32(buf, job);
	put_be32(buf + 4, rank);
	buf[8] = (uint8_t)stream;
	if (len)
		memcpy(buf + OUTPUT_HDR, data, len);
	return (int)(OUTPUT_HDR + len);
}

int st_output_decode(const uint8_t *p, size_t len, uint32_t *job,
		     uint32_t *rank, int *stream, const uint8_t **data,
		     size_t *dlen)
{
	if (!p || !job || !rank || !stream || !data || !dlen)
		return -EINVAL;
	if (len < OUTPUT_HDR)
		return -STORM_EPROTO;
	if (p[8] != 1 && p[8] != 2)
		return -STORM_EPROTO;
	*job = get_be32(p);
	*rank = get_be32(p + 4);
	*stream = p[8];
	*data = p + OUTPUT_HDR;
	*dlen = len - OUTPUT_HDR;
	return 0;
}
