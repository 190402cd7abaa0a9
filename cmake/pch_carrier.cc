// Compiled only so that its target builds a precompiled header set for the others (cmake/realign.cmake).
