/*
 * mpi.h — BCS-MPI, Storm's MPI library: the MPI-3.1 C interface, and the
 * only public header of libbcsmpi (docs/bcsmpi.md).
 *
 * The values here — handle types and every predefined handle, the layout of
 * MPI_Status, MPI_Aint/MPI_Offset/MPI_Count/MPI_Fint, special values, error
 * classes — match MPICH's ABI (MPICH 4.0.2, libmpich.so.12, x86_64), so that
 * programs built with MPICH can later run on libbcsmpi unchanged.  They are
 * a binary contract: never renumber one, and check any addition against
 * MPICH (meson test --suite bcsmpi runs the comparison).
 *
 * Every function of MPI-3.1's C binding is declared, grouped by the
 * standard's chapters, and each also as PMPI_<name> (the profiling
 * interface, MPI-3.1 §14.2): libbcsmpi defines PMPI_<name> and MPI_<name> is
 * a weak alias of it, so a profiling library may define MPI_<name> and call
 * PMPI_<name>.  Semantics are the standard's; which functions libbcsmpi
 * implements so far is listed in docs/bcsmpi.md — a program calling another
 * one compiles but does not link yet.  Interfaces that MPI-3.0 removed
 * (MPI_Address, MPI_Type_extent, MPI_LB, ...) and MPI-4.0 additions are not
 * declared.
 */
#ifndef BCSMPI_MPI_H
#define BCSMPI_MPI_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BCSMPI_BUILDING) && defined(__GNUC__)
#define BCSMPI_API __attribute__((visibility("default")))
#else
#define BCSMPI_API
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1

/* Which MPI this is, for programs that must know (MPICH defines MPICH,
 * Open MPI OPEN_MPI; BCS-MPI defines neither). */
#define BCSMPI 1

/* ------------------------------------------------------------------------ */
/* Basic types                                                              */
/* ------------------------------------------------------------------------ */

typedef long MPI_Aint;
typedef long MPI_Offset;
typedef long MPI_Count;
typedef int MPI_Fint;

/* Handles are ints; a predefined handle's value is MPICH's. */
typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Group;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_Message;

/* MPI_File is a pointer, as in MPICH (ROMIO); the struct is never defined
 * in user code, and keeping MPICH's tag keeps C++ symbols that mention
 * MPI_File compatible too. */
typedef struct ADIOI_FileD *MPI_File;

/* Five ints in MPICH's order.  count_lo / count_hi_and_cancelled hold the
 * received byte count (63 bits) and the cancelled flag (lowest bit of
 * count_hi_and_cancelled); read them only through MPI_Get_count,
 * MPI_Get_elements(_x) and MPI_Test_cancelled. */
typedef struct MPI_Status {
	int count_lo;
	int count_hi_and_cancelled;
	int MPI_SOURCE;
	int MPI_TAG;
	int MPI_ERROR;
} MPI_Status;

/* Tool information interface (MPI_T) handles: pointers, as in MPICH. */
typedef struct MPIR_T_enum_s *MPI_T_enum;
typedef struct MPIR_T_cvar_handle_s *MPI_T_cvar_handle;
typedef struct MPIR_T_pvar_handle_s *MPI_T_pvar_handle;
typedef struct MPIR_T_pvar_session_s *MPI_T_pvar_session;

/* ------------------------------------------------------------------------ */
/* Null handles and predefined objects                                      */
/* ------------------------------------------------------------------------ */

#define MPI_COMM_NULL ((MPI_Comm)0x04000000)
#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF ((MPI_Comm)0x44000001)

#define MPI_GROUP_NULL ((MPI_Group)0x08000000)
#define MPI_GROUP_EMPTY ((MPI_Group)0x48000000)

#define MPI_DATATYPE_NULL ((MPI_Datatype)0x0c000000)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x14000000)
#define MPI_OP_NULL ((MPI_Op)0x18000000)
#define MPI_INFO_NULL ((MPI_Info)0x1c000000)
#define MPI_INFO_ENV ((MPI_Info)0x5c000001)
#define MPI_WIN_NULL ((MPI_Win)0x20000000)
#define MPI_REQUEST_NULL ((MPI_Request)0x2c000000)
#define MPI_MESSAGE_NULL ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x6c000000)
#define MPI_FILE_NULL ((MPI_File)0)

#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x54000001)

#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
BCSMPI_API extern struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES;

/* ------------------------------------------------------------------------ */
/* Predefined datatypes                                                     */
/* ------------------------------------------------------------------------ */

/* An MPICH datatype handle carries the type's size in bits 8-15. */

/* C */
#define MPI_CHAR ((MPI_Datatype)0x4c000101)
#define MPI_SIGNED_CHAR ((MPI_Datatype)0x4c000118)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)0x4c000102)
#define MPI_BYTE ((MPI_Datatype)0x4c00010d)
#define MPI_WCHAR ((MPI_Datatype)0x4c00040e)
#define MPI_SHORT ((MPI_Datatype)0x4c000203)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)0x4c000204)
#define MPI_INT ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED ((MPI_Datatype)0x4c000406)
#define MPI_LONG ((MPI_Datatype)0x4c000807)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)0x4c000808)
#define MPI_LONG_LONG_INT ((MPI_Datatype)0x4c000809)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x4c000819)
#define MPI_FLOAT ((MPI_Datatype)0x4c00040a)
#define MPI_DOUBLE ((MPI_Datatype)0x4c00080b)
#define MPI_LONG_DOUBLE ((MPI_Datatype)0x4c00100c)
#define MPI_PACKED ((MPI_Datatype)0x4c00010f)

/* C99 */
#define MPI_INT8_T ((MPI_Datatype)0x4c000137)
#define MPI_INT16_T ((MPI_Datatype)0x4c000238)
#define MPI_INT32_T ((MPI_Datatype)0x4c000439)
#define MPI_INT64_T ((MPI_Datatype)0x4c00083a)
#define MPI_UINT8_T ((MPI_Datatype)0x4c00013b)
#define MPI_UINT16_T ((MPI_Datatype)0x4c00023c)
#define MPI_UINT32_T ((MPI_Datatype)0x4c00043d)
#define MPI_UINT64_T ((MPI_Datatype)0x4c00083e)
#define MPI_C_BOOL ((MPI_Datatype)0x4c00013f)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)0x4c000840)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)0x4c001041)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002042)

/* MPI's own integer types */
#define MPI_AINT ((MPI_Datatype)0x4c000843)
#define MPI_OFFSET ((MPI_Datatype)0x4c000844)
#define MPI_COUNT ((MPI_Datatype)0x4c000845)

/* C++ */
#define MPI_CXX_BOOL ((MPI_Datatype)0x4c000133)
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)0x4c000834)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x4c001035)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002036)

/* Fortran */
#define MPI_INTEGER ((MPI_Datatype)0x4c00041b)
#define MPI_REAL ((MPI_Datatype)0x4c00041c)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)0x4c00081f)
#define MPI_COMPLEX ((MPI_Datatype)0x4c00081e)
#define MPI_DOUBLE_COMPLEX ((MPI_Datatype)0x4c001022)
#define MPI_LOGICAL ((MPI_Datatype)0x4c00041d)
#define MPI_CHARACTER ((MPI_Datatype)0x4c00011a)

/* Fortran, fixed size (optional in the standard; MPICH has no
 * MPI_REAL2 or MPI_COMPLEX4, and no 16-byte integer) */
#define MPI_INTEGER1 ((MPI_Datatype)0x4c00012d)
#define MPI_INTEGER2 ((MPI_Datatype)0x4c00022f)
#define MPI_INTEGER4 ((MPI_Datatype)0x4c000430)
#define MPI_INTEGER8 ((MPI_Datatype)0x4c000831)
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define MPI_REAL4 ((MPI_Datatype)0x4c000427)
#define MPI_REAL8 ((MPI_Datatype)0x4c000829)
#define MPI_REAL16 ((MPI_Datatype)0x4c00102b)
#define MPI_COMPLEX8 ((MPI_Datatype)0x4c000828)
#define MPI_COMPLEX16 ((MPI_Datatype)0x4c00102a)
#define MPI_COMPLEX32 ((MPI_Datatype)0x4c00202c)

/* Pair types for MPI_MINLOC and MPI_MAXLOC: { value; int index; } laid out
 * as the C struct of those two members. */
#define MPI_FLOAT_INT ((MPI_Datatype)0x8c000000)
#define MPI_DOUBLE_INT ((MPI_Datatype)0x8c000001)
#define MPI_LONG_INT ((MPI_Datatype)0x8c000002)
#define MPI_SHORT_INT ((MPI_Datatype)0x8c000003)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)0x8c000004)
#define MPI_2INT ((MPI_Datatype)0x4c000816)
#define MPI_2INTEGER ((MPI_Datatype)0x4c000820)
#define MPI_2REAL ((MPI_Datatype)0x4c000821)
#define MPI_2DOUBLE_PRECISION ((MPI_Datatype)0x4c001023)

/* Classes for MPI_Type_match_size */
#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

/* Datatype decoding (MPI_Type_get_envelope) */
enum {
	MPI_COMBINER_NAMED = 1,
	MPI_COMBINER_DUP = 2,
	MPI_COMBINER_CONTIGUOUS = 3,
	MPI_COMBINER_VECTOR = 4,
	MPI_COMBINER_HVECTOR_INTEGER = 5,
	MPI_COMBINER_HVECTOR = 6,
	MPI_COMBINER_INDEXED = 7,
	MPI_COMBINER_HINDEXED_INTEGER = 8,
	MPI_COMBINER_HINDEXED = 9,
	MPI_COMBINER_INDEXED_BLOCK = 10,
	MPI_COMBINER_STRUCT_INTEGER = 11,
	MPI_COMBINER_STRUCT = 12,
	MPI_COMBINER_SUBARRAY = 13,
	MPI_COMBINER_DARRAY = 14,
	MPI_COMBINER_F90_REAL = 15,
	MPI_COMBINER_F90_COMPLEX = 16,
	MPI_COMBINER_F90_INTEGER = 17,
	MPI_COMBINER_RESIZED = 18,
	MPI_COMBINER_HINDEXED_BLOCK = 19
};

/* Subarray and darray constructors, file views */
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* ------------------------------------------------------------------------ */
/* Reduction operations                                                     */
/* ------------------------------------------------------------------------ */

#define MPI_MAX ((MPI_Op)0x58000001)
#define MPI_MIN ((MPI_Op)0x58000002)
#define MPI_SUM ((MPI_Op)0x58000003)
#define MPI_PROD ((MPI_Op)0x58000004)
#define MPI_LAND ((MPI_Op)0x58000005)
#define MPI_BAND ((MPI_Op)0x58000006)
#define MPI_LOR ((MPI_Op)0x58000007)
#define MPI_BOR ((MPI_Op)0x58000008)
#define MPI_LXOR ((MPI_Op)0x58000009)
#define MPI_BXOR ((MPI_Op)0x5800000a)
#define MPI_MINLOC ((MPI_Op)0x5800000b)
#define MPI_MAXLOC ((MPI_Op)0x5800000c)
#define MPI_REPLACE ((MPI_Op)0x5800000d)
#define MPI_NO_OP ((MPI_Op)0x5800000e)

/* ------------------------------------------------------------------------ */
/* Special values                                                           */
/* ------------------------------------------------------------------------ */

#define MPI_PROC_NULL (-1)
#define MPI_ANY_SOURCE (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID 0x24000000
#define MPI_BSEND_OVERHEAD 96

#define MPI_BOTTOM ((void *)0)
#define MPI_IN_PLACE ((void *)-1)
#define MPI_STATUS_IGNORE ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)

/* Distinct addresses, defined by the library (compare, never dereference). */
BCSMPI_API extern int *const MPI_UNWEIGHTED;
BCSMPI_API extern int *const MPI_WEIGHTS_EMPTY;
/* A Fortran status (MPI_Status_c2f/f2c): five INTEGERs, indexed from 0
 * here (MPICH's values) */
#define MPI_F_STATUS_SIZE 5
#define MPI_F_SOURCE 2
#define MPI_F_TAG 3
#define MPI_F_ERROR 4
BCSMPI_API extern MPI_Fint *MPI_F_STATUS_IGNORE;
BCSMPI_API extern MPI_Fint *MPI_F_STATUSES_IGNORE;

/* String lengths, each counting the terminating NUL */
#define MPI_MAX_PROCESSOR_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_DATAREP_STRING 128

/* Thread support levels, in increasing order */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* Results of MPI_Comm_compare and MPI_Group_compare */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED 1

/* Topologies (MPI_Topo_test) */
enum {
	MPI_GRAPH = 1,
	MPI_CART = 2,
	MPI_DIST_GRAPH = 3
};

/* Predefined attribute keys: communicators ... */
#define MPI_TAG_UB 0x64400001
#define MPI_HOST 0x64400003
#define MPI_IO 0x64400005
#define MPI_WTIME_IS_GLOBAL 0x64400007
#define MPI_UNIVERSE_SIZE 0x64400009
#define MPI_LASTUSEDCODE 0x6440000b
#define MPI_APPNUM 0x6440000d
/* ... and windows */
#define MPI_WIN_BASE 0x66000001
#define MPI_WIN_SIZE 0x66000003
#define MPI_WIN_DISP_UNIT 0x66000005
#define MPI_WIN_CREATE_FLAVOR 0x66000007
#define MPI_WIN_MODEL 0x66000009

/* One-sided communication */
enum {
	MPI_WIN_FLAVOR_CREATE = 1,
	MPI_WIN_FLAVOR_ALLOCATE = 2,
	MPI_WIN_FLAVOR_DYNAMIC = 3,
	MPI_WIN_FLAVOR_SHARED = 4
};
enum {
	MPI_WIN_SEPARATE = 1,
	MPI_WIN_UNIFIED = 2
};
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384

/* I/O: access modes, seek origins, view displacement */
#define MPI_MODE_CREATE 1
#define MPI_MODE_RDONLY 2
#define MPI_MODE_WRONLY 4
#define MPI_MODE_RDWR 8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_EXCL 64
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT (-54278278)

/* MPI_T: verbosity levels, in increasing order of detail */
enum {
	MPI_T_VERBOSITY_USER_BASIC = 221,
	MPI_T_VERBOSITY_USER_DETAIL,
	MPI_T_VERBOSITY_USER_ALL,
	MPI_T_VERBOSITY_TUNER_BASIC,
	MPI_T_VERBOSITY_TUNER_DETAIL,
	MPI_T_VERBOSITY_TUNER_ALL,
	MPI_T_VERBOSITY_MPIDEV_BASIC,
	MPI_T_VERBOSITY_MPIDEV_DETAIL,
	MPI_T_VERBOSITY_MPIDEV_ALL
};
/* MPI_T: the object a variable is bound to */
enum {
	MPI_T_BIND_NO_OBJECT = 9700,
	MPI_T_BIND_MPI_COMM,
	MPI_T_BIND_MPI_DATATYPE,
	MPI_T_BIND_MPI_ERRHANDLER,
	MPI_T_BIND_MPI_FILE,
	MPI_T_BIND_MPI_GROUP,
	MPI_T_BIND_MPI_OP,
	MPI_T_BIND_MPI_REQUEST,
	MPI_T_BIND_MPI_WIN,
	MPI_T_BIND_MPI_MESSAGE,
	MPI_T_BIND_MPI_INFO
};
/* MPI_T: control variable scopes */
enum {
	MPI_T_SCOPE_CONSTANT = 60438,
	MPI_T_SCOPE_READONLY,
	MPI_T_SCOPE_LOCAL,
	MPI_T_SCOPE_GROUP,
	MPI_T_SCOPE_GROUP_EQ,
	MPI_T_SCOPE_ALL,
	MPI_T_SCOPE_ALL_EQ
};
/* MPI_T: performance variable classes */
enum {
	MPI_T_PVAR_CLASS_STATE = 240,
	MPI_T_PVAR_CLASS_LEVEL,
	MPI_T_PVAR_CLASS_SIZE,
	MPI_T_PVAR_CLASS_PERCENTAGE,
	MPI_T_PVAR_CLASS_HIGHWATERMARK,
	MPI_T_PVAR_CLASS_LOWWATERMARK,
	MPI_T_PVAR_CLASS_COUNTER,
	MPI_T_PVAR_CLASS_AGGREGATE,
	MPI_T_PVAR_CLASS_TIMER,
	MPI_T_PVAR_CLASS_GENERIC
};

/* ------------------------------------------------------------------------ */
/* Error classes                                                            */
/* ------------------------------------------------------------------------ */

/* MPI_Error_string names each; MPI_Error_class maps any code to its class.
 * Classes above MPI_T_ERR_INVALID up to MPI_ERR_LASTCODE are for
 * MPI_Add_error_class. */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_ROOT 7
#define MPI_ERR_GROUP 8
#define MPI_ERR_OP 9
#define MPI_ERR_TOPOLOGY 10
#define MPI_ERR_DIMS 11
#define MPI_ERR_ARG 12
#define MPI_ERR_UNKNOWN 13
#define MPI_ERR_TRUNCATE 14
#define MPI_ERR_OTHER 15
#define MPI_ERR_INTERN 16
#define MPI_ERR_IN_STATUS 17
#define MPI_ERR_PENDING 18
#define MPI_ERR_REQUEST 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_BAD_FILE 22
#define MPI_ERR_CONVERSION 23
#define MPI_ERR_DUP_DATAREP 24
#define MPI_ERR_FILE_EXISTS 25
#define MPI_ERR_FILE_IN_USE 26
#define MPI_ERR_FILE 27
#define MPI_ERR_INFO 28
#define MPI_ERR_INFO_KEY 29
#define MPI_ERR_INFO_VALUE 30
#define MPI_ERR_INFO_NOKEY 31
#define MPI_ERR_IO 32
#define MPI_ERR_NAME 33
#define MPI_ERR_NO_MEM 34
#define MPI_ERR_NOT_SAME 35
#define MPI_ERR_NO_SPACE 36
#define MPI_ERR_NO_SUCH_FILE 37
#define MPI_ERR_PORT 38
#define MPI_ERR_QUOTA 39
#define MPI_ERR_READ_ONLY 40
#define MPI_ERR_SERVICE 41
#define MPI_ERR_SPAWN 42
#define MPI_ERR_UNSUPPORTED_DATAREP 43
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPI_ERR_WIN 45
#define MPI_ERR_BASE 46
#define MPI_ERR_LOCKTYPE 47
#define MPI_ERR_KEYVAL 48
#define MPI_ERR_RMA_CONFLICT 49
#define MPI_ERR_RMA_SYNC 50
#define MPI_ERR_SIZE 51
#define MPI_ERR_DISP 52
#define MPI_ERR_ASSERT 53
/* 54 is unused, as in MPICH */
#define MPI_ERR_RMA_RANGE 55
#define MPI_ERR_RMA_ATTACH 56
#define MPI_ERR_RMA_SHARED 57
#define MPI_ERR_RMA_FLAVOR 58
#define MPI_T_ERR_MEMORY 59
#define MPI_T_ERR_NOT_INITIALIZED 60
#define MPI_T_ERR_CANNOT_INIT 61
#define MPI_T_ERR_INVALID_INDEX 62
#define MPI_T_ERR_INVALID_ITEM 63
#define MPI_T_ERR_INVALID_HANDLE 64
#define MPI_T_ERR_OUT_OF_HANDLES 65
#define MPI_T_ERR_OUT_OF_SESSIONS 66
#define MPI_T_ERR_INVALID_SESSION 67
#define MPI_T_ERR_CVAR_SET_NOT_NOW 68
#define MPI_T_ERR_CVAR_SET_NEVER 69
#define MPI_T_ERR_PVAR_NO_STARTSTOP 70
#define MPI_T_ERR_PVAR_NO_WRITE 71
#define MPI_T_ERR_PVAR_NO_ATOMIC 72
#define MPI_T_ERR_INVALID_NAME 73
#define MPI_T_ERR_INVALID 74
#define MPI_ERR_LASTCODE 0x3fffffff

/* ------------------------------------------------------------------------ */
/* Callback types and predefined callbacks                                  */
/* ------------------------------------------------------------------------ */

typedef void MPI_User_function(void *invec, void *inoutvec, int *len,
	MPI_Datatype *datatype);

typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval,
	void *extra_state, void *attribute_val_in, void *attribute_val_out,
	int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval,
	void *attribute_val, void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype,
	int type_keyval, void *extra_state, void *attribute_val_in,
	void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype,
	int type_keyval, void *attribute_val, void *extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval,
	void *extra_state, void *attribute_val_in, void *attribute_val_out,
	int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval,
	void *attribute_val, void *extra_state);

typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *error_code,
	...);
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *error_code,
	...);
typedef void MPI_File_errhandler_function(MPI_File *file, int *error_code,
	...);

typedef int MPI_Grequest_query_function(void *extra_state,
	MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);

typedef int MPI_Datarep_extent_function(MPI_Datatype datatype,
	MPI_Aint *extent, void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf,
	MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
	void *extra_state);

/* Deprecated since MPI-2.0 / 2.2, still part of MPI-3.1 (chapter 15) */
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval,
	void *extra_state, void *attribute_val_in, void *attribute_val_out,
	int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval,
	void *attribute_val, void *extra_state);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;

/* The duplicating callbacks are one library function (MPICH's symbol); the
 * null callbacks are null pointers, as in MPICH. */
BCSMPI_API int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state,
	void *attribute_val_in, void *attribute_val_out, int *flag);
#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)
#define MPI_DUP_FN MPIR_Dup_fn
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function *)MPI_DUP_FN)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function *)MPI_DUP_FN)
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function *)MPI_DUP_FN)
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)

/* ------------------------------------------------------------------------ */
/* Functions                                                                */
/* ------------------------------------------------------------------------ */

/* BCSMPI_FN(ret, name, (params)) declares MPI_name and PMPI_name with the
 * same prototype, so the two can never drift apart. */
#define BCSMPI_FN(ret, name, params)                                         \
	BCSMPI_API ret MPI_##name params;                                    \
	BCSMPI_API ret PMPI_##name params;

/* ---- 3. Point-to-point communication ---------------------------------- */

BCSMPI_FN(int, Send, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm))
BCSMPI_FN(int, Recv, (void *buf, int count, MPI_Datatype datatype,
	int source, int tag, MPI_Comm comm, MPI_Status *status))
BCSMPI_FN(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype,
	int *count))
BCSMPI_FN(int, Bsend, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm))
BCSMPI_FN(int, Ssend, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm))
BCSMPI_FN(int, Rsend, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm))
BCSMPI_FN(int, Buffer_attach, (void *buffer, int size))
BCSMPI_FN(int, Buffer_detach, (void *buffer_addr, int *size))
BCSMPI_FN(int, Isend, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Issend, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Irsend, (const void *buf, int count, MPI_Datatype datatype,
	int dest, int tag, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Irecv, (void *buf, int count, MPI_Datatype datatype,
	int source, int tag, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Wait, (MPI_Request *request, MPI_Status *status))
BCSMPI_FN(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
BCSMPI_FN(int, Request_free, (MPI_Request *request))
BCSMPI_FN(int, Waitany, (int count, MPI_Request array_of_requests[],
	int *index, MPI_Status *status))
BCSMPI_FN(int, Testany, (int count, MPI_Request array_of_requests[],
	int *index, int *flag, MPI_Status *status))
/* Status arrays are declared as pointers, not the standard's [], which is
 * the same type: GCC 11+ reads [] as "at least one element" and warns
 * (-Wstringop-overflow) when a program passes MPI_STATUSES_IGNORE. */
BCSMPI_FN(int, Waitall, (int count, MPI_Request array_of_requests[],
	MPI_Status *array_of_statuses))
BCSMPI_FN(int, Testall, (int count, MPI_Request array_of_requests[],
	int *flag, MPI_Status *array_of_statuses))
BCSMPI_FN(int, Waitsome, (int incount, MPI_Request array_of_requests[],
	int *outcount, int array_of_indices[],
	MPI_Status *array_of_statuses))
BCSMPI_FN(int, Testsome, (int incount, MPI_Request array_of_requests[],
	int *outcount, int array_of_indices[],
	MPI_Status *array_of_statuses))
BCSMPI_FN(int, Request_get_status, (MPI_Request request, int *flag,
	MPI_Status *status))
BCSMPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag,
	MPI_Status *status))
BCSMPI_FN(int, Probe, (int source, int tag, MPI_Comm comm,
	MPI_Status *status))
BCSMPI_FN(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag,
	MPI_Message *message, MPI_Status *status))
BCSMPI_FN(int, Mprobe, (int source, int tag, MPI_Comm comm,
	MPI_Message *message, MPI_Status *status))
BCSMPI_FN(int, Mrecv, (void *buf, int count, MPI_Datatype datatype,
	MPI_Message *message, MPI_Status *status))
BCSMPI_FN(int, Imrecv, (void *buf, int count, MPI_Datatype datatype,
	MPI_Message *message, MPI_Request *request))
BCSMPI_FN(int, Cancel, (MPI_Request *request))
BCSMPI_FN(int, Test_cancelled, (const MPI_Status *status, int *flag))
BCSMPI_FN(int, Send_init, (const void *buf, int count,
	MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Bsend_init, (const void *buf, int count,
	MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Ssend_init, (const void *buf, int count,
	MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Rsend_init, (const void *buf, int count,
	MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Recv_init, (void *buf, int count, MPI_Datatype datatype,
	int source, int tag, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Start, (MPI_Request *request))
BCSMPI_FN(int, Startall, (int count, MPI_Request array_of_requests[]))
BCSMPI_FN(int, Sendrecv, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
	int recvcount, MPI_Datatype recvtype, int source, int recvtag,
	MPI_Comm comm, MPI_Status *status))
BCSMPI_FN(int, Sendrecv_replace, (void *buf, int count,
	MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
	MPI_Comm comm, MPI_Status *status))

/* ---- 4. Datatypes ------------------------------------------------------ */

BCSMPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_vector, (int count, int blocklength, int stride,
	MPI_Datatype oldtype, MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_hvector, (int count, int blocklength,
	MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
BCSMPI_FN(int, Type_indexed, (int count,
	const int array_of_blocklengths[],
	const int array_of_displacements[], MPI_Datatype oldtype,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_hindexed, (int count,
	const int array_of_blocklengths[],
	const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_indexed_block, (int count, int blocklength,
	const int array_of_displacements[], MPI_Datatype oldtype,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_hindexed_block, (int count, int blocklength,
	const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_struct, (int count,
	const int array_of_blocklengths[],
	const MPI_Aint array_of_displacements[],
	const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_subarray, (int ndims,
	const int array_of_sizes[], const int array_of_subsizes[],
	const int array_of_starts[], int order, MPI_Datatype oldtype,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_darray, (int size, int rank, int ndims,
	const int array_of_gsizes[], const int array_of_distribs[],
	const int array_of_dargs[], const int array_of_psizes[], int order,
	MPI_Datatype oldtype, MPI_Datatype *newtype))
BCSMPI_FN(int, Get_address, (const void *location, MPI_Aint *address))
BCSMPI_FN(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
BCSMPI_FN(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
BCSMPI_FN(int, Type_size, (MPI_Datatype datatype, int *size))
BCSMPI_FN(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
BCSMPI_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb,
	MPI_Aint *extent))
BCSMPI_FN(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb,
	MPI_Count *extent))
BCSMPI_FN(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb,
	MPI_Aint extent, MPI_Datatype *newtype))
BCSMPI_FN(int, Type_get_true_extent, (MPI_Datatype datatype,
	MPI_Aint *true_lb, MPI_Aint *true_extent))
BCSMPI_FN(int, Type_get_true_extent_x, (MPI_Datatype datatype,
	MPI_Count *true_lb, MPI_Count *true_extent))
BCSMPI_FN(int, Type_commit, (MPI_Datatype *datatype))
BCSMPI_FN(int, Type_free, (MPI_Datatype *datatype))
BCSMPI_FN(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
BCSMPI_FN(int, Get_elements, (const MPI_Status *status,
	MPI_Datatype datatype, int *count))
BCSMPI_FN(int, Get_elements_x, (const MPI_Status *status,
	MPI_Datatype datatype, MPI_Count *count))
BCSMPI_FN(int, Type_get_envelope, (MPI_Datatype datatype,
	int *num_integers, int *num_addresses, int *num_datatypes,
	int *combiner))
BCSMPI_FN(int, Type_get_contents, (MPI_Datatype datatype,
	int max_integers, int max_addresses, int max_datatypes,
	int array_of_integers[], MPI_Aint array_of_addresses[],
	MPI_Datatype array_of_datatypes[]))
BCSMPI_FN(int, Pack, (const void *inbuf, int incount,
	MPI_Datatype datatype, void *outbuf, int outsize, int *position,
	MPI_Comm comm))
BCSMPI_FN(int, Unpack, (const void *inbuf, int insize, int *position,
	void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm))
BCSMPI_FN(int, Pack_size, (int incount, MPI_Datatype datatype,
	MPI_Comm comm, int *size))
BCSMPI_FN(int, Pack_external, (const char datarep[], const void *inbuf,
	int incount, MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
	MPI_Aint *position))
BCSMPI_FN(int, Unpack_external, (const char datarep[], const void *inbuf,
	MPI_Aint insize, MPI_Aint *position, void *outbuf, int outcount,
	MPI_Datatype datatype))
BCSMPI_FN(int, Pack_external_size, (const char datarep[], int incount,
	MPI_Datatype datatype, MPI_Aint *size))

/* ---- 5. Collective communication --------------------------------------- */

BCSMPI_FN(int, Barrier, (MPI_Comm comm))
BCSMPI_FN(int, Bcast, (void *buffer, int count, MPI_Datatype datatype,
	int root, MPI_Comm comm))
BCSMPI_FN(int, Gather, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, int root, MPI_Comm comm))
BCSMPI_FN(int, Gatherv, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
	const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
BCSMPI_FN(int, Scatter, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, int root, MPI_Comm comm))
BCSMPI_FN(int, Scatterv, (const void *sendbuf, const int sendcounts[],
	const int displs[], MPI_Datatype sendtype, void *recvbuf,
	int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
BCSMPI_FN(int, Allgather, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm))
BCSMPI_FN(int, Allgatherv, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
	const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
BCSMPI_FN(int, Alltoall, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm))
BCSMPI_FN(int, Alltoallv, (const void *sendbuf, const int sendcounts[],
	const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
	const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
	MPI_Comm comm))
BCSMPI_FN(int, Alltoallw, (const void *sendbuf, const int sendcounts[],
	const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
	const int recvcounts[], const int rdispls[],
	const MPI_Datatype recvtypes[], MPI_Comm comm))
BCSMPI_FN(int, Reduce, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
BCSMPI_FN(int, Op_create, (MPI_User_function *user_fn, int commute,
	MPI_Op *op))
BCSMPI_FN(int, Op_free, (MPI_Op *op))
BCSMPI_FN(int, Allreduce, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
BCSMPI_FN(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count,
	MPI_Datatype datatype, MPI_Op op))
BCSMPI_FN(int, Op_commutative, (MPI_Op op, int *commute))
BCSMPI_FN(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf,
	int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
BCSMPI_FN(int, Reduce_scatter, (const void *sendbuf, void *recvbuf,
	const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
	MPI_Comm comm))
BCSMPI_FN(int, Scan, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
BCSMPI_FN(int, Exscan, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
BCSMPI_FN(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype,
	int root, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Igather, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Igatherv, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
	const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Iscatter, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Iscatterv, (const void *sendbuf, const int sendcounts[],
	const int displs[], MPI_Datatype sendtype, void *recvbuf,
	int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Iallgather, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Iallgatherv, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
	const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Ialltoall, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ialltoallv, (const void *sendbuf, const int sendcounts[],
	const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
	const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
	MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ialltoallw, (const void *sendbuf, const int sendcounts[],
	const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
	const int recvcounts[], const int rdispls[],
	const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ireduce, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf,
	int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf,
	const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
	MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Iscan, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Iexscan, (const void *sendbuf, void *recvbuf, int count,
	MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
	MPI_Request *request))

/* ---- 6. Groups, contexts, communicators and caching -------------------- */

BCSMPI_FN(int, Group_size, (MPI_Group group, int *size))
BCSMPI_FN(int, Group_rank, (MPI_Group group, int *rank))
BCSMPI_FN(int, Group_translate_ranks, (MPI_Group group1, int n,
	const int ranks1[], MPI_Group group2, int ranks2[]))
BCSMPI_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2,
	int *result))
BCSMPI_FN(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
BCSMPI_FN(int, Group_union, (MPI_Group group1, MPI_Group group2,
	MPI_Group *newgroup))
BCSMPI_FN(int, Group_intersection, (MPI_Group group1, MPI_Group group2,
	MPI_Group *newgroup))
BCSMPI_FN(int, Group_difference, (MPI_Group group1, MPI_Group group2,
	MPI_Group *newgroup))
BCSMPI_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[],
	MPI_Group *newgroup))
BCSMPI_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[],
	MPI_Group *newgroup))
BCSMPI_FN(int, Group_range_incl, (MPI_Group group, int n,
	int ranges[][3], MPI_Group *newgroup))
BCSMPI_FN(int, Group_range_excl, (MPI_Group group, int n,
	int ranges[][3], MPI_Group *newgroup))
BCSMPI_FN(int, Group_free, (MPI_Group *group))
BCSMPI_FN(int, Comm_size, (MPI_Comm comm, int *size))
BCSMPI_FN(int, Comm_rank, (MPI_Comm comm, int *rank))
BCSMPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2,
	int *result))
BCSMPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
BCSMPI_FN(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info,
	MPI_Comm *newcomm))
BCSMPI_FN(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm,
	MPI_Request *request))
BCSMPI_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group,
	MPI_Comm *newcomm))
BCSMPI_FN(int, Comm_create_group, (MPI_Comm comm, MPI_Group group,
	int tag, MPI_Comm *newcomm))
BCSMPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key,
	MPI_Comm *newcomm))
BCSMPI_FN(int, Comm_split_type, (MPI_Comm comm, int split_type, int key,
	MPI_Info info, MPI_Comm *newcomm))
BCSMPI_FN(int, Comm_free, (MPI_Comm *comm))
BCSMPI_FN(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
BCSMPI_FN(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))
BCSMPI_FN(int, Comm_test_inter, (MPI_Comm comm, int *flag))
BCSMPI_FN(int, Comm_remote_size, (MPI_Comm comm, int *size))
BCSMPI_FN(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
BCSMPI_FN(int, Intercomm_create, (MPI_Comm local_comm, int local_leader,
	MPI_Comm peer_comm, int remote_leader, int tag,
	MPI_Comm *newintercomm))
BCSMPI_FN(int, Intercomm_merge, (MPI_Comm intercomm, int high,
	MPI_Comm *newintracomm))
BCSMPI_FN(int, Comm_create_keyval,
	(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
	MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
	void *extra_state))
BCSMPI_FN(int, Comm_free_keyval, (int *comm_keyval))
BCSMPI_FN(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval,
	void *attribute_val))
BCSMPI_FN(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval,
	void *attribute_val, int *flag))
BCSMPI_FN(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
BCSMPI_FN(int, Win_create_keyval,
	(MPI_Win_copy_attr_function *win_copy_attr_fn,
	MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
	void *extra_state))
BCSMPI_FN(int, Win_free_keyval, (int *win_keyval))
BCSMPI_FN(int, Win_set_attr, (MPI_Win win, int win_keyval,
	void *attribute_val))
BCSMPI_FN(int, Win_get_attr, (MPI_Win win, int win_keyval,
	void *attribute_val, int *flag))
BCSMPI_FN(int, Win_delete_attr, (MPI_Win win, int win_keyval))
BCSMPI_FN(int, Type_create_keyval,
	(MPI_Type_copy_attr_function *type_copy_attr_fn,
	MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
	void *extra_state))
BCSMPI_FN(int, Type_free_keyval, (int *type_keyval))
BCSMPI_FN(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval,
	void *attribute_val))
BCSMPI_FN(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval,
	void *attribute_val, int *flag))
BCSMPI_FN(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
BCSMPI_FN(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))
BCSMPI_FN(int, Comm_get_name, (MPI_Comm comm, char *comm_name,
	int *resultlen))
BCSMPI_FN(int, Type_set_name, (MPI_Datatype datatype,
	const char *type_name))
BCSMPI_FN(int, Type_get_name, (MPI_Datatype datatype, char *type_name,
	int *resultlen))
BCSMPI_FN(int, Win_set_name, (MPI_Win win, const char *win_name))
BCSMPI_FN(int, Win_get_name, (MPI_Win win, char *win_name,
	int *resultlen))

/* ---- 7. Process topologies --------------------------------------------- */

BCSMPI_FN(int, Cart_create, (MPI_Comm comm_old, int ndims,
	const int dims[], const int periods[], int reorder,
	MPI_Comm *comm_cart))
BCSMPI_FN(int, Dims_create, (int nnodes, int ndims, int dims[]))
BCSMPI_FN(int, Graph_create, (MPI_Comm comm_old, int nnodes,
	const int index[], const int edges[], int reorder,
	MPI_Comm *comm_graph))
BCSMPI_FN(int, Dist_graph_create_adjacent, (MPI_Comm comm_old,
	int indegree, const int sources[], const int sourceweights[],
	int outdegree, const int destinations[], const int destweights[],
	MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
BCSMPI_FN(int, Dist_graph_create, (MPI_Comm comm_old, int n,
	const int sources[], const int degrees[], const int destinations[],
	const int weights[], MPI_Info info, int reorder,
	MPI_Comm *comm_dist_graph))
BCSMPI_FN(int, Topo_test, (MPI_Comm comm, int *status))
BCSMPI_FN(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
BCSMPI_FN(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges,
	int index[], int edges[]))
BCSMPI_FN(int, Cartdim_get, (MPI_Comm comm, int *ndims))
BCSMPI_FN(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[],
	int periods[], int coords[]))
BCSMPI_FN(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
BCSMPI_FN(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims,
	int coords[]))
BCSMPI_FN(int, Graph_neighbors_count, (MPI_Comm comm, int rank,
	int *nneighbors))
BCSMPI_FN(int, Graph_neighbors, (MPI_Comm comm, int rank,
	int maxneighbors, int neighbors[]))
BCSMPI_FN(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree,
	int *outdegree, int *weighted))
BCSMPI_FN(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree,
	int sources[], int sourceweights[], int maxoutdegree,
	int destinations[], int destweights[]))
BCSMPI_FN(int, Cart_shift, (MPI_Comm comm, int direction, int disp,
	int *rank_source, int *rank_dest))
BCSMPI_FN(int, Cart_sub, (MPI_Comm comm, const int remain_dims[],
	MPI_Comm *newcomm))
BCSMPI_FN(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[],
	const int periods[], int *newrank))
BCSMPI_FN(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[],
	const int edges[], int *newrank))
BCSMPI_FN(int, Neighbor_allgather, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm))
BCSMPI_FN(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
	const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
BCSMPI_FN(int, Neighbor_alltoall, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm))
BCSMPI_FN(int, Neighbor_alltoallv, (const void *sendbuf,
	const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
	void *recvbuf, const int recvcounts[], const int rdispls[],
	MPI_Datatype recvtype, MPI_Comm comm))
BCSMPI_FN(int, Neighbor_alltoallw, (const void *sendbuf,
	const int sendcounts[], const MPI_Aint sdispls[],
	const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
	const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
	MPI_Comm comm))
BCSMPI_FN(int, Ineighbor_allgather, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
	const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
	MPI_Request *request))
BCSMPI_FN(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount,
	MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ineighbor_alltoallv, (const void *sendbuf,
	const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
	void *recvbuf, const int recvcounts[], const int rdispls[],
	MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
BCSMPI_FN(int, Ineighbor_alltoallw, (const void *sendbuf,
	const int sendcounts[], const MPI_Aint sdispls[],
	const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
	const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
	MPI_Comm comm, MPI_Request *request))

/* ---- 8. Environmental management --------------------------------------- */

BCSMPI_FN(int, Get_version, (int *version, int *subversion))
BCSMPI_FN(int, Get_library_version, (char *version, int *resultlen))
BCSMPI_FN(int, Get_processor_name, (char *name, int *resultlen))
BCSMPI_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
BCSMPI_FN(int, Free_mem, (void *base))
BCSMPI_FN(int, Comm_create_errhandler,
	(MPI_Comm_errhandler_function *comm_errhandler_fn,
	MPI_Errhandler *errhandler))
BCSMPI_FN(int, Comm_set_errhandler, (MPI_Comm comm,
	MPI_Errhandler errhandler))
BCSMPI_FN(int, Comm_get_errhandler, (MPI_Comm comm,
	MPI_Errhandler *errhandler))
BCSMPI_FN(int, Win_create_errhandler,
	(MPI_Win_errhandler_function *win_errhandler_fn,
	MPI_Errhandler *errhandler))
BCSMPI_FN(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
BCSMPI_FN(int, Win_get_errhandler, (MPI_Win win,
	MPI_Errhandler *errhandler))
BCSMPI_FN(int, File_create_errhandler,
	(MPI_File_errhandler_function *file_errhandler_fn,
	MPI_Errhandler *errhandler))
BCSMPI_FN(int, File_set_errhandler, (MPI_File file,
	MPI_Errhandler errhandler))
BCSMPI_FN(int, File_get_errhandler, (MPI_File file,
	MPI_Errhandler *errhandler))
BCSMPI_FN(int, Errhandler_free, (MPI_Errhandler *errhandler))
BCSMPI_FN(int, Error_string, (int errorcode, char *string, int *resultlen))
BCSMPI_FN(int, Error_class, (int errorcode, int *errorclass))
BCSMPI_FN(int, Add_error_class, (int *errorclass))
BCSMPI_FN(int, Add_error_code, (int errorclass, int *errorcode))
BCSMPI_FN(int, Add_error_string, (int errorcode, const char *string))
BCSMPI_FN(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
BCSMPI_FN(int, Win_call_errhandler, (MPI_Win win, int errorcode))
BCSMPI_FN(int, File_call_errhandler, (MPI_File fh, int errorcode))
BCSMPI_FN(double, Wtime, (void))
BCSMPI_FN(double, Wtick, (void))
BCSMPI_FN(int, Init, (int *argc, char ***argv))
BCSMPI_FN(int, Finalize, (void))
BCSMPI_FN(int, Initialized, (int *flag))
BCSMPI_FN(int, Abort, (MPI_Comm comm, int errorcode))
BCSMPI_FN(int, Finalized, (int *flag))

/* ---- 9. The info object ------------------------------------------------ */

BCSMPI_FN(int, Info_create, (MPI_Info *info))
BCSMPI_FN(int, Info_set, (MPI_Info info, const char *key,
	const char *value))
BCSMPI_FN(int, Info_delete, (MPI_Info info, const char *key))
BCSMPI_FN(int, Info_get, (MPI_Info info, const char *key, int valuelen,
	char *value, int *flag))
BCSMPI_FN(int, Info_get_valuelen, (MPI_Info info, const char *key,
	int *valuelen, int *flag))
BCSMPI_FN(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
BCSMPI_FN(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
BCSMPI_FN(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
BCSMPI_FN(int, Info_free, (MPI_Info *info))

/* ---- 10. Process creation and management ------------------------------- */

BCSMPI_FN(int, Comm_spawn, (const char *command, char *argv[],
	int maxprocs, MPI_Info info, int root, MPI_Comm comm,
	MPI_Comm *intercomm, int array_of_errcodes[]))
BCSMPI_FN(int, Comm_get_parent, (MPI_Comm *parent))
BCSMPI_FN(int, Comm_spawn_multiple, (int count, char *array_of_commands[],
	char **array_of_argv[], const int array_of_maxprocs[],
	const MPI_Info array_of_info[], int root, MPI_Comm comm,
	MPI_Comm *intercomm, int array_of_errcodes[]))
BCSMPI_FN(int, Open_port, (MPI_Info info, char *port_name))
BCSMPI_FN(int, Close_port, (const char *port_name))
BCSMPI_FN(int, Comm_accept, (const char *port_name, MPI_Info info,
	int root, MPI_Comm comm, MPI_Comm *newcomm))
BCSMPI_FN(int, Comm_connect, (const char *port_name, MPI_Info info,
	int root, MPI_Comm comm, MPI_Comm *newcomm))
BCSMPI_FN(int, Publish_name, (const char *service_name, MPI_Info info,
	const char *port_name))
BCSMPI_FN(int, Unpublish_name, (const char *service_name, MPI_Info info,
	const char *port_name))
BCSMPI_FN(int, Lookup_name, (const char *service_name, MPI_Info info,
	char *port_name))
BCSMPI_FN(int, Comm_disconnect, (MPI_Comm *comm))
BCSMPI_FN(int, Comm_join, (int fd, MPI_Comm *intercomm))

/* ---- 11. One-sided communication --------------------------------------- */

BCSMPI_FN(int, Win_create, (void *base, MPI_Aint size, int disp_unit,
	MPI_Info info, MPI_Comm comm, MPI_Win *win))
BCSMPI_FN(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info,
	MPI_Comm comm, void *baseptr, MPI_Win *win))
BCSMPI_FN(int, Win_allocate_shared, (MPI_Aint size, int disp_unit,
	MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
BCSMPI_FN(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size,
	int *disp_unit, void *baseptr))
BCSMPI_FN(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm,
	MPI_Win *win))
BCSMPI_FN(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
BCSMPI_FN(int, Win_detach, (MPI_Win win, const void *base))
BCSMPI_FN(int, Win_free, (MPI_Win *win))
BCSMPI_FN(int, Win_get_group, (MPI_Win win, MPI_Group *group))
BCSMPI_FN(int, Win_set_info, (MPI_Win win, MPI_Info info))
BCSMPI_FN(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
BCSMPI_FN(int, Put, (const void *origin_addr, int origin_count,
	MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
	int target_count, MPI_Datatype target_datatype, MPI_Win win))
BCSMPI_FN(int, Get, (void *origin_addr, int origin_count,
	MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
	int target_count, MPI_Datatype target_datatype, MPI_Win win))
BCSMPI_FN(int, Accumulate, (const void *origin_addr, int origin_count,
	MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
	int target_count, MPI_Datatype target_datatype, MPI_Op op,
	MPI_Win win))
BCSMPI_FN(int, Get_accumulate, (const void *origin_addr, int origin_count,
	MPI_Datatype origin_datatype, void *result_addr, int result_count,
	MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
	int target_count, MPI_Datatype target_datatype, MPI_Op op,
	MPI_Win win))
BCSMPI_FN(int, Fetch_and_op, (const void *origin_addr, void *result_addr,
	MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
	MPI_Op op, MPI_Win win))
BCSMPI_FN(int, Compare_and_swap, (const void *origin_addr,
	const void *compare_addr, void *result_addr, MPI_Datatype datatype,
	int target_rank, MPI_Aint target_disp, MPI_Win win))
BCSMPI_FN(int, Rput, (const void *origin_addr, int origin_count,
	MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
	int target_count, MPI_Datatype target_datatype, MPI_Win win,
	MPI_Request *request))
BCSMPI_FN(int, Rget, (void *origin_addr, int origin_count,
	MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
	int target_count, MPI_Datatype target_datatype, MPI_Win win,
	MPI_Request *request))
BCSMPI_FN(int, Raccumulate, (const void *origin_addr, int origin_count,
	MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
	int target_count, MPI_Datatype target_datatype, MPI_Op op,
	MPI_Win win, MPI_Request *request))
BCSMPI_FN(int, Rget_accumulate, (const void *origin_addr,
	int origin_count, MPI_Datatype origin_datatype, void *result_addr,
	int result_count, MPI_Datatype result_datatype, int target_rank,
	MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
	MPI_Op op, MPI_Win win, MPI_Request *request))
BCSMPI_FN(int, Win_fence, (int assert, MPI_Win win))
BCSMPI_FN(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
BCSMPI_FN(int, Win_complete, (MPI_Win win))
BCSMPI_FN(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
BCSMPI_FN(int, Win_wait, (MPI_Win win))
BCSMPI_FN(int, Win_test, (MPI_Win win, int *flag))
BCSMPI_FN(int, Win_lock, (int lock_type, int rank, int assert,
	MPI_Win win))
BCSMPI_FN(int, Win_lock_all, (int assert, MPI_Win win))
BCSMPI_FN(int, Win_unlock, (int rank, MPI_Win win))
BCSMPI_FN(int, Win_unlock_all, (MPI_Win win))
BCSMPI_FN(int, Win_flush, (int rank, MPI_Win win))
BCSMPI_FN(int, Win_flush_all, (MPI_Win win))
BCSMPI_FN(int, Win_flush_local, (int rank, MPI_Win win))
BCSMPI_FN(int, Win_flush_local_all, (MPI_Win win))
BCSMPI_FN(int, Win_sync, (MPI_Win win))

/* ---- 12. External interfaces ------------------------------------------- */

BCSMPI_FN(int, Grequest_start, (MPI_Grequest_query_function *query_fn,
	MPI_Grequest_free_function *free_fn,
	MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
	MPI_Request *request))
BCSMPI_FN(int, Grequest_complete, (MPI_Request request))
BCSMPI_FN(int, Status_set_elements, (MPI_Status *status,
	MPI_Datatype datatype, int count))
BCSMPI_FN(int, Status_set_elements_x, (MPI_Status *status,
	MPI_Datatype datatype, MPI_Count count))
BCSMPI_FN(int, Status_set_cancelled, (MPI_Status *status, int flag))
BCSMPI_FN(int, Init_thread, (int *argc, char ***argv, int required,
	int *provided))
BCSMPI_FN(int, Query_thread, (int *provided))
BCSMPI_FN(int, Is_thread_main, (int *flag))

/* ---- 13. I/O ----------------------------------------------------------- */

BCSMPI_FN(int, File_open, (MPI_Comm comm, const char *filename, int amode,
	MPI_Info info, MPI_File *fh))
BCSMPI_FN(int, File_close, (MPI_File *fh))
BCSMPI_FN(int, File_delete, (const char *filename, MPI_Info info))
BCSMPI_FN(int, File_set_size, (MPI_File fh, MPI_Offset size))
BCSMPI_FN(int, File_preallocate, (MPI_File fh, MPI_Offset size))
BCSMPI_FN(int, File_get_size, (MPI_File fh, MPI_Offset *size))
BCSMPI_FN(int, File_get_group, (MPI_File fh, MPI_Group *group))
BCSMPI_FN(int, File_get_amode, (MPI_File fh, int *amode))
BCSMPI_FN(int, File_set_info, (MPI_File fh, MPI_Info info))
BCSMPI_FN(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
BCSMPI_FN(int, File_set_view, (MPI_File fh, MPI_Offset disp,
	MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
	MPI_Info info))
BCSMPI_FN(int, File_get_view, (MPI_File fh, MPI_Offset *disp,
	MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep))
BCSMPI_FN(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf,
	int count, MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_read_at_all, (MPI_File fh, MPI_Offset offset,
	void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_write_at, (MPI_File fh, MPI_Offset offset,
	const void *buf, int count, MPI_Datatype datatype,
	MPI_Status *status))
BCSMPI_FN(int, File_write_at_all, (MPI_File fh, MPI_Offset offset,
	const void *buf, int count, MPI_Datatype datatype,
	MPI_Status *status))
BCSMPI_FN(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf,
	int count, MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset,
	const void *buf, int count, MPI_Datatype datatype,
	MPI_Request *request))
BCSMPI_FN(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset,
	void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset,
	const void *buf, int count, MPI_Datatype datatype,
	MPI_Request *request))
BCSMPI_FN(int, File_read, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_read_all, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_write, (MPI_File fh, const void *buf, int count,
	MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_write_all, (MPI_File fh, const void *buf, int count,
	MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_iread, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_iwrite, (MPI_File fh, const void *buf, int count,
	MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_iread_all, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_iwrite_all, (MPI_File fh, const void *buf, int count,
	MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
BCSMPI_FN(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
BCSMPI_FN(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset,
	MPI_Offset *disp))
BCSMPI_FN(int, File_read_shared, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_write_shared, (MPI_File fh, const void *buf,
	int count, MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_iread_shared, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_iwrite_shared, (MPI_File fh, const void *buf,
	int count, MPI_Datatype datatype, MPI_Request *request))
BCSMPI_FN(int, File_read_ordered, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_write_ordered, (MPI_File fh, const void *buf,
	int count, MPI_Datatype datatype, MPI_Status *status))
BCSMPI_FN(int, File_seek_shared, (MPI_File fh, MPI_Offset offset,
	int whence))
BCSMPI_FN(int, File_get_position_shared, (MPI_File fh,
	MPI_Offset *offset))
BCSMPI_FN(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset,
	void *buf, int count, MPI_Datatype datatype))
BCSMPI_FN(int, File_read_at_all_end, (MPI_File fh, void *buf,
	MPI_Status *status))
BCSMPI_FN(int, File_write_at_all_begin, (MPI_File fh, MPI_Offset offset,
	const void *buf, int count, MPI_Datatype datatype))
BCSMPI_FN(int, File_write_at_all_end, (MPI_File fh, const void *buf,
	MPI_Status *status))
BCSMPI_FN(int, File_read_all_begin, (MPI_File fh, void *buf, int count,
	MPI_Datatype datatype))
BCSMPI_FN(int, File_read_all_end, (MPI_File fh, void *buf,
	MPI_Status *status))
BCSMPI_FN(int, File_write_all_begin, (MPI_File fh, const void *buf,
	int count, MPI_Datatype datatype))
BCSMPI_FN(int, File_write_all_end, (MPI_File fh, const void *buf,
	MPI_Status *status))
BCSMPI_FN(int, File_read_ordered_begin, (MPI_File fh, void *buf,
	int count, MPI_Datatype datatype))
BCSMPI_FN(int, File_read_ordered_end, (MPI_File fh, void *buf,
	MPI_Status *status))
BCSMPI_FN(int, File_write_ordered_begin, (MPI_File fh, const void *buf,
	int count, MPI_Datatype datatype))
BCSMPI_FN(int, File_write_ordered_end, (MPI_File fh, const void *buf,
	MPI_Status *status))
BCSMPI_FN(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype,
	MPI_Aint *extent))
BCSMPI_FN(int, Register_datarep, (const char *datarep,
	MPI_Datarep_conversion_function *read_conversion_fn,
	MPI_Datarep_conversion_function *write_conversion_fn,
	MPI_Datarep_extent_function *dtype_file_extent_fn,
	void *extra_state))
BCSMPI_FN(int, File_set_atomicity, (MPI_File fh, int flag))
BCSMPI_FN(int, File_get_atomicity, (MPI_File fh, int *flag))
BCSMPI_FN(int, File_sync, (MPI_File fh))

/* ---- 14. Tool support -------------------------------------------------- */

BCSMPI_FN(int, Pcontrol, (const int level, ...))

BCSMPI_FN(int, T_init_thread, (int required, int *provided))
BCSMPI_FN(int, T_finalize, (void))
BCSMPI_FN(int, T_enum_get_info, (MPI_T_enum enumtype, int *num,
	char *name, int *name_len))
BCSMPI_FN(int, T_enum_get_item, (MPI_T_enum enumtype, int index,
	int *value, char *name, int *name_len))
BCSMPI_FN(int, T_cvar_get_num, (int *num_cvar))
BCSMPI_FN(int, T_cvar_get_info, (int cvar_index, char *name,
	int *name_len, int *verbosity, MPI_Datatype *datatype,
	MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
	int *scope))
BCSMPI_FN(int, T_cvar_get_index, (const char *name, int *cvar_index))
BCSMPI_FN(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle,
	MPI_T_cvar_handle *handle, int *count))
BCSMPI_FN(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle))
BCSMPI_FN(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
BCSMPI_FN(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf))
BCSMPI_FN(int, T_pvar_get_num, (int *num_pvar))
BCSMPI_FN(int, T_pvar_get_info, (int pvar_index, char *name,
	int *name_len, int *verbosity, int *var_class,
	MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
	int *desc_len, int *bind, int *readonly, int *continuous,
	int *atomic))
BCSMPI_FN(int, T_pvar_get_index, (const char *name, int var_class,
	int *pvar_index))
BCSMPI_FN(int, T_pvar_session_create, (MPI_T_pvar_session *session))
BCSMPI_FN(int, T_pvar_session_free, (MPI_T_pvar_session *session))
BCSMPI_FN(int, T_pvar_handle_alloc, (MPI_T_pvar_session session,
	int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
	int *count))
BCSMPI_FN(int, T_pvar_handle_free, (MPI_T_pvar_session session,
	MPI_T_pvar_handle *handle))
BCSMPI_FN(int, T_pvar_start, (MPI_T_pvar_session session,
	MPI_T_pvar_handle handle))
BCSMPI_FN(int, T_pvar_stop, (MPI_T_pvar_session session,
	MPI_T_pvar_handle handle))
BCSMPI_FN(int, T_pvar_read, (MPI_T_pvar_session session,
	MPI_T_pvar_handle handle, void *buf))
BCSMPI_FN(int, T_pvar_write, (MPI_T_pvar_session session,
	MPI_T_pvar_handle handle, const void *buf))
BCSMPI_FN(int, T_pvar_reset, (MPI_T_pvar_session session,
	MPI_T_pvar_handle handle))
BCSMPI_FN(int, T_pvar_readreset, (MPI_T_pvar_session session,
	MPI_T_pvar_handle handle, void *buf))
BCSMPI_FN(int, T_category_get_num, (int *num_cat))
BCSMPI_FN(int, T_category_get_info, (int cat_index, char *name,
	int *name_len, char *desc, int *desc_len, int *num_cvars,
	int *num_pvars, int *num_categories))
BCSMPI_FN(int, T_category_get_index, (const char *name, int *cat_index))
BCSMPI_FN(int, T_category_get_cvars, (int cat_index, int len,
	int indices[]))
BCSMPI_FN(int, T_category_get_pvars, (int cat_index, int len,
	int indices[]))
BCSMPI_FN(int, T_category_get_categories, (int cat_index, int len,
	int indices[]))
BCSMPI_FN(int, T_category_changed, (int *stamp))

/* ---- 15. Deprecated functions (still in MPI-3.1) ----------------------- */

BCSMPI_FN(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
BCSMPI_FN(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val,
	int *flag))
BCSMPI_FN(int, Attr_delete, (MPI_Comm comm, int keyval))
BCSMPI_FN(int, Keyval_create, (MPI_Copy_function *copy_fn,
	MPI_Delete_function *delete_fn, int *keyval, void *extra_state))
BCSMPI_FN(int, Keyval_free, (int *keyval))

/* ---- 17. Language bindings --------------------------------------------- */

BCSMPI_FN(int, Type_create_f90_real, (int p, int r,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_f90_complex, (int p, int r,
	MPI_Datatype *newtype))
BCSMPI_FN(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))
BCSMPI_FN(int, Type_match_size, (int typeclass, int size,
	MPI_Datatype *datatype))
BCSMPI_FN(int, Status_c2f, (const MPI_Status *c_status,
	MPI_Fint *f_status))
BCSMPI_FN(int, Status_f2c, (const MPI_Fint *f_status,
	MPI_Status *c_status))
BCSMPI_FN(MPI_Fint, File_c2f, (MPI_File file))
BCSMPI_FN(MPI_File, File_f2c, (MPI_Fint file))

/* The integer handles convert to and from Fortran unchanged: these are
 * macros, as in MPICH, and have no library symbol. */
#define MPI_Comm_c2f(comm) ((MPI_Fint)(comm))
#define MPI_Comm_f2c(comm) ((MPI_Comm)(comm))
#define MPI_Type_c2f(datatype) ((MPI_Fint)(datatype))
#define MPI_Type_f2c(datatype) ((MPI_Datatype)(datatype))
#define MPI_Group_c2f(group) ((MPI_Fint)(group))
#define MPI_Group_f2c(group) ((MPI_Group)(group))
#define MPI_Info_c2f(info) ((MPI_Fint)(info))
#define MPI_Info_f2c(info) ((MPI_Info)(info))
#define MPI_Request_c2f(request) ((MPI_Fint)(request))
#define MPI_Request_f2c(request) ((MPI_Request)(request))
#define MPI_Op_c2f(op) ((MPI_Fint)(op))
#define MPI_Op_f2c(op) ((MPI_Op)(op))
#define MPI_Errhandler_c2f(errhandler) ((MPI_Fint)(errhandler))
#define MPI_Errhandler_f2c(errhandler) ((MPI_Errhandler)(errhandler))
#define MPI_Win_c2f(win) ((MPI_Fint)(win))
#define MPI_Win_f2c(win) ((MPI_Win)(win))
#define MPI_Message_c2f(message) ((MPI_Fint)(message))
#define MPI_Message_f2c(message) ((MPI_Message)(message))
#define PMPI_Comm_c2f(comm) MPI_Comm_c2f(comm)
#define PMPI_Comm_f2c(comm) MPI_Comm_f2c(comm)
#define PMPI_Type_c2f(datatype) MPI_Type_c2f(datatype)
#define PMPI_Type_f2c(datatype) MPI_Type_f2c(datatype)
#define PMPI_Group_c2f(group) MPI_Group_c2f(group)
#define PMPI_Group_f2c(group) MPI_Group_f2c(group)
#define PMPI_Info_c2f(info) MPI_Info_c2f(info)
#define PMPI_Info_f2c(info) MPI_Info_f2c(info)
#define PMPI_Request_c2f(request) MPI_Request_c2f(request)
#define PMPI_Request_f2c(request) MPI_Request_f2c(request)
#define PMPI_Op_c2f(op) MPI_Op_c2f(op)
#define PMPI_Op_f2c(op) MPI_Op_f2c(op)
#define PMPI_Errhandler_c2f(errhandler) MPI_Errhandler_c2f(errhandler)
#define PMPI_Errhandler_f2c(errhandler) MPI_Errhandler_f2c(errhandler)
#define PMPI_Win_c2f(win) MPI_Win_c2f(win)
#define PMPI_Win_f2c(win) MPI_Win_f2c(win)
#define PMPI_Message_c2f(message) MPI_Message_c2f(message)
#define PMPI_Message_f2c(message) MPI_Message_f2c(message)

#undef BCSMPI_FN

#ifdef __cplusplus
}
#endif

#endif /* BCSMPI_MPI_H */
