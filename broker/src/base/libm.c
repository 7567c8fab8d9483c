/*
 * SQLite's math functions without libm loaded at start.
 *
 * The static libsqlite3 (decision 0020) calls 19 functions that only
 * libm defines, for its SQL math functions (sin(), pow(), ...) and
 * FTS's ranking; Pigeon's own statements call none of them. Linked
 * normally, libm is mapped and relocated by every process, every hook
 * run included. Built with PGN_LIBM_ON_DEMAND, the link wraps those 19
 * references (cmake/static_deps.cmake: -Wl,--wrap=NAME sends SQLite's
 * call of NAME to __wrap_NAME) to the functions below, which open libm
 * with dlopen on the first call and call the system's own function: the
 * same code and results, paid for only by a statement that uses it.
 * See docs/decisions/0250-libm-on-demand.md.
 *
 * The __wrap_ names are the linker's convention for --wrap.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#define PGN_LIBM_SONAME "libm.so.6"

/* One argument, and two. */
#define PGN_LIBM_FUNCS1(X)                                                     \
	X(acos)                                                                \
	X(acosh)                                                               \
	X(asin)                                                                \
	X(asinh)                                                               \
	X(atan)                                                                \
	X(atanh)                                                               \
	X(cos)                                                                 \
	X(cosh)                                                                \
	X(exp)                                                                 \
	X(log)                                                                 \
	X(sin)                                                                 \
	X(sinh)                                                                \
	X(sqrt)                                                                \
	X(tan)                                                                 \
	X(tanh)                                                                \
	X(trunc)
#define PGN_LIBM_FUNCS2(X)                                                     \
	X(atan2)                                                               \
	X(fmod)                                                                \
	X(pow)

/*
 * The address of libm's 'name', or NULL if libm cannot be opened or
 * lacks it (then the caller answers NaN, which SQLite returns as NULL).
 * Kept in 'cache' once found. Atomic, for a threaded program: dlopen
 * counts its opens, so threads racing the first call get the same
 * handle and the same address.
 */
static void *
libm_sym(_Atomic(void *) *cache, const char *name)
{
	static _Atomic(void *) h;
	void *lib, *sym = atomic_load(cache);

	if (sym != NULL)
		return sym;
	lib = atomic_load(&h);
	if (lib == NULL) {
		lib = dlopen(PGN_LIBM_SONAME, RTLD_NOW | RTLD_LOCAL);
		if (lib == NULL)
			return NULL;
		atomic_store(&h, lib);
	}
	sym = dlsym(lib, name);
	if (sym != NULL)
		atomic_store(cache, sym);
	return sym;
}

#define PGN_LIBM_DEF1(f)                                                       \
	double __wrap_##f(double x);                                           \
	double __wrap_##f(double x)                                            \
	{                                                                      \
		static _Atomic(void *) cache;                                  \
		double (*fn)(double);                                          \
		void *sym = libm_sym(&cache, #f);                              \
                                                                               \
		if (sym == NULL)                                               \
			return NAN;                                            \
		memcpy(&fn, &sym, sizeof(fn));                                 \
		return fn(x);                                                  \
	}
#define PGN_LIBM_DEF2(f)                                                       \
	double __wrap_##f(double x, double y);                                 \
	double __wrap_##f(double x, double y)                                  \
	{                                                                      \
		static _Atomic(void *) cache;                                  \
		double (*fn)(double, double);                                  \
		void *sym = libm_sym(&cache, #f);                              \
                                                                               \
		if (sym == NULL)                                               \
			return NAN;                                            \
		memcpy(&fn, &sym, sizeof(fn));                                 \
		return fn(x, y);                                               \
	}
PGN_LIBM_FUNCS1(PGN_LIBM_DEF1)
PGN_LIBM_FUNCS2(PGN_LIBM_DEF2)
