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
	target_link_libraries(pgn_sqlite_static INTERFACE
		${PGN_SQLITE_ARCHIVE} m ${CMAKE_DL_LIBS} Threads::Threads)
	add_library(pgn_sodium_static INTERFACE)
	target_include_directories(pgn_sodium_static INTERFACE
		$<TARGET_PROPERTY:PkgConfig::SODIUM,INTERFACE_INCLUDE_DIRECTORIES>)
	target_link_libraries(pgn_sodium_static INTERFACE
		${PGN_SODIUM_ARCHIVE} Threads::Threads)
	set(PGN_SQLITE_LIB pgn_sqlite_static)
	set(PGN_SODIUM_LIB pgn_sodium_static)
	message(STATUS "pigeon: sqlite3 and libsodium linked statically")
else()
	set(PGN_SQLITE_LIB PkgConfig::SQLITE)
	set(PGN_SODIUM_LIB PkgConfig::SODIUM)
	message(STATUS "pigeon: sqlite3 and libsodium linked dynamically")
endif()
