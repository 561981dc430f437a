/* The address clients mount follows a manager group's lead
 * (Service_Address_Command).  The active runs the command with "take"
 * before it serves: it puts the address on its host and announces it
 * (a gratuitous ARP), so clients' packets reach it without a remount.  A
 * member runs it with "release" when it starts and when it stops being
 * the active (its lease lost, a clean stop, a handover), so that an
 * address left behind does not answer for the group.  One killed with
 * SIGKILL leaves it on its host until it starts again. */
#ifndef PANDO_SERVICE_ADDRESS_H
#define PANDO_SERVICE_ADDRESS_H

#include <stddef.h>

#define PANDO_SERVICE_ADDRESS_TIMEOUT_MS 10000

/* Runs `command verb` through /bin/sh, at most timeout_ms (then kills
 * it).  0 when it exits 0; -ETIMEDOUT, -EIO (another exit) or the spawn's
 * error, with why it failed in why. */
int pando_service_address(const char *command, const char *verb, int timeout_ms, char *why,
			  size_t why_len);

#endif
