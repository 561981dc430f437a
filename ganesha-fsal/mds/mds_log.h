/* The engine's log: one line per call, at a level, to the sink the host
 * set (Ganesha's log in the FSAL, a test's buffer in the unit tests);
 * stderr until one is set.  The levels are Ganesha's, so a line keeps the
 * level it had when it was logged there. */
#ifndef PANDO_MDS_LOG_H
#define PANDO_MDS_LOG_H

enum mds_log_level {
	MDS_LOG_CRIT,
	MDS_LOG_MAJOR,
	MDS_LOG_WARN,
	MDS_LOG_EVENT,
	MDS_LOG_INFO,
	MDS_LOG_DEBUG,
};

/* func: the function that logs, as Ganesha's lines name it. */
typedef void mds_log_sink(enum mds_log_level level, const char *func, const char *msg);

void mds_log_set_sink(mds_log_sink *sink);
void mds_log(enum mds_log_level level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
