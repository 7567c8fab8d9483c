# cmake --install and the .deb (docs/decisions/0124). Included at the
# end of the top CMakeLists.txt, after the targets.
include(GNUInstallDirs)

# The man pages, gzipped as Debian wants them (-n: no name or time in
# the header, so the bytes depend on the text alone).
set(PGN_MAN_GZ ${PGN_DOCS_DIR}/man1/pigeon.1.gz
	${PGN_DOCS_DIR}/man1/pigeon-hook.1.gz)
add_custom_command(OUTPUT ${PGN_MAN_GZ}
	COMMAND gzip -9nkf ${PGN_DOCS_DIR}/man1/pigeon.1
		${PGN_DOCS_DIR}/man1/pigeon-hook.1
	DEPENDS ${PGN_DOCS_DIR}/man1/pigeon.1 ${PGN_DOCS_DIR}/man1/pigeon-hook.1
	COMMENT "Compressing the man pages" VERBATIM)

# The changelog a Debian package carries, from packaging/changelog.in.
string(TIMESTAMP PGN_BUILD_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
if(PGN_GIT_DATE)
	execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%cD
		WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
		OUTPUT_VARIABLE PGN_BUILD_DATE OUTPUT_STRIP_TRAILING_WHITESPACE
		ERROR_QUIET)
endif()
set(PGN_DEB_MAINTAINER "Pigeon maintainers <pigeon@example.org>" CACHE STRING
	"Maintainer field of the .deb and its changelog")
configure_file(${PROJECT_SOURCE_DIR}/packaging/changelog.in
	${PROJECT_BINARY_DIR}/share/changelog @ONLY)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/share/changelog.gz
	COMMAND gzip -9nkf ${PROJECT_BINARY_DIR}/share/changelog
	DEPENDS ${PROJECT_BINARY_DIR}/share/changelog
	COMMENT "Compressing the changelog" VERBATIM)
add_custom_target(pigeon-install-files ALL
	DEPENDS ${PGN_MAN_GZ} ${PROJECT_BINARY_DIR}/share/changelog.gz)
# The pages are another directory's outputs (tools/): a file-level
# dependency alone does not order the two in a parallel build.
add_dependencies(pigeon-install-files pigeon-docs)

install(FILES ${PGN_MAN_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PGN_DOCS_DIR}/bash/pigeon ${PGN_DOCS_DIR}/bash/pigeon-hook
	DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${PGN_DOCS_DIR}/zsh/_pigeon
	DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${PGN_DOCS_DIR}/fish/pigeon.fish
	${PGN_DOCS_DIR}/fish/pigeon-hook.fish
	DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
file(GLOB PGN_DOC_FILES ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PGN_DOC_FILES}
	${PROJECT_SOURCE_DIR}/packaging/copyright
	${PROJECT_BINARY_DIR}/share/changelog.gz
	DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/decisions
	DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

# CPack: cpack -G DEB in the build directory writes pigeon_VERSION_ARCH.deb.
set(CPACK_PACKAGE_NAME pigeon)
set(CPACK_PACKAGE_VENDOR "The Pigeon authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Who answers for the package: set PGN_DEB_MAINTAINER to a real address
# when publishing (lintian refuses localhost).
set(PGN_DEB_MAINTAINER "Pigeon maintainers <pigeon@example.org>" CACHE STRING
	"Maintainer field of the .deb and its changelog")
set(CPACK_PACKAGE_CONTACT "${PGN_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PGN_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
	"mailbox and coordination broker for AI coding agents")
set(CPACK_PACKAGE_DESCRIPTION "Pigeon lets AI coding agents (Cursor, Claude Code, Codex, Gemini
CLI and others) that work side by side on one machine send each other
short messages by name. The recipient's host runs pigeon-hook on session
start and on every prompt; the hook claims the queued messages, records
them in a tamper-evident audit and injects them into the model's context,
exactly once. There is no daemon: an SQLite database file is the broker.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The run-time dependencies are what the binaries link dynamically, as
# dpkg-shlibdeps finds them: libc6 and libcjson1; SQLite and libsodium
# are linked statically by default (decision 0020), and are dependencies
# when PGN_STATIC_DEPS=OFF.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The PostgreSQL backend loads libpq.so.5 with dlopen when a PostgreSQL
# database is opened (decision 0111): dpkg-shlibdeps cannot see it, and
# SQLite alone works without it, so libpq5 is recommended, not required.
# pigeon web loads libmicrohttpd.so.12 the same way (decision 0171):
# every other command works without it.
if(LIBPQ_FOUND)
	set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpq5, libmicrohttpd12")
else()
	set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libmicrohttpd12")
endif()
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# On removal, how each user takes Pigeon's hook registrations away
# (decision 0226); it edits no user's file.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${PROJECT_SOURCE_DIR}/packaging/prerm")
set(CPACK_SOURCE_IGNORE_FILES "/build.*/;/\\\\.git/")
include(CPack)
