/* Service_Address_Command's runner: the verb goes after the command,
 * exit 0 is success, another exit or a signal is -EIO with the reason,
 * and a command that hangs is killed at its bound. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "service_address.h"

static char dir[] = "/tmp/pando-service-address-XXXXXX";

static void test_the_verb_follows_the_command_and_exit_0_succeeds(void)
{
	char cmd[256], path[128], got[32] = "", why[128] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/verb", dir);
	snprintf(cmd, sizeof(cmd), "echo > %s", path);
	CHECK_EQ(pando_service_address(cmd, "take", 5000, why, sizeof(why)), 0);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(got, sizeof(got), f) != NULL);
		fclose(f);
	}
	CHECK(strcmp(got, "take\n") == 0);
}

static void test_a_failing_command_is_an_error_with_its_status(void)
{
	char why[128] = "";

	CHECK_EQ(pando_service_address("exit 3;", "release", 5000, why, sizeof(why)), -EIO);
	CHECK(strcmp(why, "exit status 3") == 0);
	CHECK_EQ(pando_service_address("kill -9 $$;", "take", 5000, why, sizeof(why)), -EIO);
	CHECK(strcmp(why, "killed by signal 9") == 0);
}

static void test_a_hung_command_is_killed_at_its_bound(void)
{
	struct timespec a, b;
	char why[128] = "";
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_EQ(pando_service_address("sleep 30;", "take", 300, why, sizeof(why)), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	CHECK(ms >= 300 && ms < 5000);
	CHECK(strcmp(why, "still running after 300 ms: killed") == 0);
}

int main(void)
{
	char path[128];

	CHECK(mkdtemp(dir) != NULL);
	test_the_verb_follows_the_command_and_exit_0_succeeds();
	test_a_failing_command_is_an_error_with_its_status();
	test_a_hung_command_is_killed_at_its_bound();
	snprintf(path, sizeof(path), "%s/verb", dir);
	unlink(path);
	rmdir(dir);
	CHECK_DONE();
}
