/* Hex digits, for key files, handles and ids typed by people. */
#ifndef PANDO_HEX_H
#define PANDO_HEX_H

/* 0..15, or -1 for anything that is not a hex digit. */
static inline int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
