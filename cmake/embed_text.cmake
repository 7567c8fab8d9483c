# Embed one text file into a C source as a NUL-terminated byte array.
# Invoked at build time: cmake -DOUT=... -DFILE=... -DNAME=... -P embed_text.cmake
file(READ "${FILE}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
get_filename_component(name "${FILE}" NAME)
set(body "/* Generated from ${name} by cmake/embed_text.cmake. */\n")
string(APPEND body "const char ${NAME}[] = {${hex} 0};\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
