/* Functions banned from Pigeon's sources (after git's banned.h). */
#ifndef PGN_BANNED_H
#define PGN_BANNED_H

#define PGN_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) PGN_BANNED(strcpy)
#undef strcat
#define strcat(x, y) PGN_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) PGN_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) PGN_BANNED(strncat)
#undef sprintf
#define sprintf(...) PGN_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) PGN_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) PGN_BANNED(strtok)
#undef atoi
#define atoi(x) PGN_BANNED(atoi)
#undef gets
#define gets(x) PGN_BANNED(gets)

#endif
