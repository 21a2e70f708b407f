/// \file
/// FIBER_EXPORT marks what libfiber.so exports: the public API, and the parts of detail/ that the
/// headers' inline and template code calls. The library is built with hidden visibility, so
/// everything else (the dispatcher, the protocol, the workers) stays inside it; libfiber/fiber.map
/// hides the rest (standard templates instantiated over internal types).
///
/// Hand-written rather than generated (CMake's GenerateExportHeader): fiber is a shared library
/// on ELF platforms only (MPI spawning, fork), where building and using the library need the same
/// attribute, so a generated header would add a build-tree include path and nothing else.
#pragma once

/// Marks a class or function as part of libfiber.so's interface.
#define FIBER_EXPORT __attribute__((visibility("default")))
