# Link sqlite3 and libsodium statically where their archives exist
# (Debian ships libsqlite3.a and libsodium.a in the -dev packages):
# a dynamic libsqlite3 costs every hook run about 1.2 M instructions of
# dynamic loading. cJSON stays dynamic: Debian ships no libcjson.a.
# See docs/decisions/0020-static-sqlite-sodium.md.
#
# Sets PGN_SQLITE_LIB and PGN_SODIUM_LIB to the targets to link.
# Look beside the shared library pkg-config found, then the usual places.
function(pgn_find_archive var target archive)
	get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
	set(hints)
	foreach(lib IN LISTS libs)
		if(IS_ABSOLUTE "${lib}")
			get_filename_component(dir "${lib}" DIRECTORY)
			list(APPEND hints "${dir}")
		endif()
	endforeach()
	find_library(${var} NAMES ${archive} HINTS ${hints})
endfunction()
pgn_find_archive(PGN_SQLITE_ARCHIVE PkgConfig::SQLITE libsqlite3.a)
pgn_find_archive(PGN_SODIUM_ARCHIVE PkgConfig::SODIUM libsodium.a)
if(PGN_SQLITE_ARCHIVE AND PGN_SODIUM_ARCHIVE)
	set(pgn_static_default ON)
else()
	set(pgn_static_default OFF)
endif()
option(PGN_STATIC_DEPS "Link sqlite3 and libsodium statically (needs libsqlite3.a, libsodium.a)"
	${pgn_static_default})

if(PGN_STATIC_DEPS)
	if(NOT PGN_SQLITE_ARCHIVE OR NOT PGN_SODIUM_ARCHIVE)
		message(FATAL_ERROR "PGN_STATIC_DEPS: libsqlite3.a or "
			"libsodium.a not found; configure with -DPGN_STATIC_DEPS=OFF")
	endif()
	find_package(Threads REQUIRED)
	add_library(pgn_sqlite_static INTERFACE)
	target_include_directories(pgn_sqlite_static INTERFACE
		$<TARGET_PROPERTY:PkgConfig::SQLITE,INTERFACE_INCLUDE_DIRECTORIES>)
	# SQLite's 19 calls into libm (its SQL math functions, FTS's
	# ranking) go through broker/src/base/libm.c, which opens libm
	# with dlopen on the first call, instead of every process mapping
	# libm at start (docs/decisions/0250-libm-on-demand.md). glibc on
	# Linux only (the soname), and a linker with --wrap (GNU ld, gold,
	# lld); OFF links libm as before.
	include(CheckLinkerFlag)
	check_linker_flag(C "LINKER:--wrap=sin" PGN_HAVE_WRAP)
	if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND PGN_HAVE_WRAP)
		set(pgn_libm_default ON)
	else()
		set(pgn_libm_default OFF)
	endif()
	option(PGN_LIBM_ON_DEMAND
		"Open libm on SQLite's first math call instead of at every start"
		${pgn_libm_default})
	set(PGN_LIBM_WRAPPED acos acosh asin asinh atan atan2 atanh cos cosh
		exp fmod log pow sin sinh sqrt tan tanh trunc)
	if(PGN_LIBM_ON_DEMAND)
		set(pgn_libm ${CMAKE_DL_LIBS})
	else()
		set(pgn_libm m)
	endif()
	target_link_libraries(pgn_sqlite_static INTERFACE
		${PGN_SQLITE_ARCHIVE} ${pgn_libm} ${CMAKE_DL_LIBS} Threads::Threads)
	if(PGN_LIBM_ON_DEMAND)
		# An object, not an archive member: on every link line, before
		# the archive whose references it answers.
		add_library(pgn_libm OBJECT
			${PROJECT_SOURCE_DIR}/broker/src/base/libm.c)
		set_target_properties(pgn_libm PROPERTIES
			POSITION_INDEPENDENT_CODE ON)
		target_link_libraries(pgn_libm PRIVATE pgn_warnings pgn_hardening)
		target_link_libraries(pgn_sqlite_static INTERFACE
			$<TARGET_OBJECTS:pgn_libm>)
		foreach(f IN LISTS PGN_LIBM_WRAPPED)
			target_link_options(pgn_sqlite_static INTERFACE
				"LINKER:--wrap=${f}")
		endforeach()
	endif()
	add_library(pgn_sodium_static INTERFACE)
	target_include_directories(pgn_sodium_static INTERFACE
		$<TARGET_PROPERTY:PkgConfig::SODIUM,INTERFACE_INCLUDE_DIRECTORIES>)
	target_link_libraries(pgn_sodium_static INTERFACE
		${PGN_SODIUM_ARCHIVE} Threads::Threads)
	set(PGN_SQLITE_LIB pgn_sqlite_static)
	set(PGN_SODIUM_LIB pgn_sodium_static)
	message(STATUS "pigeon: sqlite3 and libsodium linked statically")
else()
	set(PGN_LIBM_ON_DEMAND OFF)
	set(PGN_SQLITE_LIB PkgConfig::SQLITE)
	set(PGN_SODIUM_LIB PkgConfig::SODIUM)
	message(STATUS "pigeon: sqlite3 and libsodium linked dynamically")
endif()
