/* The cluster key: a secret shared by the OSD targets and the metadata
 * managers.  It signs file handles (capabilities) and control-protocol
 * calls.  File format in README.md. */
#ifndef PANDO_CLUSTER_KEY_H
#define PANDO_CLUSTER_KEY_H

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_KEY_SECRET_LEN 32

struct cluster_key {
	uint16_t id;
	uint8_t secret[CLUSTER_KEY_SECRET_LEN];
};

/* 0, -ENOENT / -EACCES (cannot open), -EINVAL (malformed; *why says what). */
int cluster_key_load(const char *path, struct cluster_key *key, const char **why);
int cluster_key_parse(const char *text, struct cluster_key *key, const char **why);
/* Fresh random key; 0 or -EIO when no randomness could be had. */
int cluster_key_generate(uint16_t id, struct cluster_key *key);
/* Writes "id = N\nsecret = HEX\n" into buf (at least 96 bytes). */
void cluster_key_format(const struct cluster_key *key, char *buf, size_t cap);

#endif
