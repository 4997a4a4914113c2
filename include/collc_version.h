/* collc_version.h - collc's version (its own header: no MPI needed). */
#ifndef COLLC_VERSION_H
#define COLLC_VERSION_H
#define COLLC_VERSION "0.1.0"
#endif
