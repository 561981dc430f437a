// pando_rdb_logger_new: RocksDB's messages through the daemon's own log
// instead of an info LOG file beside the database.
//
// Debian 12's librocksdb 7.8 keeps its assertions: once a write of the
// LOG file failed (a full disk), the next line RocksDB logged aborted the
// process.  Its C API gained a callback logger only in 8.x
// (rocksdb_logger_create_callback_logger); this is that, for 7.8, over
// the same struct rocksdb_logger_t that c.cc defines.
#include <rocksdb/c.h>
#include <rocksdb/env.h>

#include <cstdarg>
#include <cstdio>
#include <memory>

#include "pando_rdb_logger.h"
#include "ratelimit.h"

struct rocksdb_logger_t {
	std::shared_ptr<rocksdb::Logger> rep;
};

namespace {

// A full disk makes RocksDB retry and log every few milliseconds: at most
// 10 lines per 5 s, then one line saying how many were dropped.
constexpr unsigned BURST = 10;
constexpr unsigned WINDOW_MS = 5000;

class CallbackLogger : public rocksdb::Logger {
public:
	CallbackLogger(pando_rdb_log_fn *log, void *arg)
		: rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), log_(log), arg_(arg)
	{
		ratelimit_init(&limit_, WINDOW_MS, BURST);
	}

	~CallbackLogger() override { ratelimit_destroy(&limit_); }

	CallbackLogger(const CallbackLogger &) = delete;
	CallbackLogger &operator=(const CallbackLogger &) = delete;

	// The option dump RocksDB writes at open: not news for an admin.
	void LogHeader(const char *, va_list) override {}

	__attribute__((format(printf, 2, 0)))
	void Logv(const char *format, va_list ap) override
	{
		Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
	}

	__attribute__((format(printf, 3, 0)))
	void Logv(const rocksdb::InfoLogLevel level, const char *format, va_list ap) override
	{
		char msg[512];
		unsigned dropped;

		if (level < GetInfoLogLevel() || !log_ || !ratelimit_pass_now(&limit_, &dropped))
			return;
		int n = snprintf(msg, sizeof(msg), "rocksdb: ");
		vsnprintf(msg + n, sizeof(msg) - n, format, ap);
		if (dropped) {
			char line[640];
			snprintf(line, sizeof(line), "%s (%u similar lines dropped)", msg, dropped);
			log_(arg_, line);
		} else {
			log_(arg_, msg);
		}
	}

private:
	pando_rdb_log_fn *log_;
	void *arg_;
	struct ratelimit limit_;
};

} // namespace

extern "C" rocksdb_logger_t *pando_rdb_logger_new(pando_rdb_log_fn *log, void *arg)
{
	try {
		return new rocksdb_logger_t{std::make_shared<CallbackLogger>(log, arg)};
	} catch (...) {
		return nullptr;
	}
}

extern "C" void pando_rdb_logger_free(rocksdb_logger_t *l)
{
	delete l;
}
