/* co_weak: every Lua API function the collector calls is a weak reference,
 * so that luatrace.so loads into any Lua (RTLD_NOW fails on a symbol that
 * is missing: lua_tointeger and luaL_register are not in Lua 5.2+) and
 * luaopen_luatrace can refuse it with a clear message (co_module.c).
 * Included in every collector file by meson (-include); a new API call
 * belongs here too (collector-otherlua fails otherwise). */
#ifndef CO_WEAK_H
#define CO_WEAK_H

#pragma weak luaL_error
#pragma weak luaL_loadbuffer
#pragma weak luaL_loadstring
#pragma weak luaL_newmetatable
#pragma weak luaL_ref
#pragma weak luaL_register
#pragma weak luaL_unref
#pragma weak lua_call
#pragma weak lua_checkstack
#pragma weak lua_close
#pragma weak lua_concat
#pragma weak lua_createtable
#pragma weak lua_dump
#pragma weak lua_error
#pragma weak lua_gc
#pragma weak lua_getallocf
#pragma weak lua_getfenv
#pragma weak lua_getfield
#pragma weak lua_gethook
#pragma weak lua_gethookcount
#pragma weak lua_gethookmask
#pragma weak lua_getinfo
#pragma weak lua_getlocal
#pragma weak lua_getmetatable
#pragma weak lua_getstack
#pragma weak lua_gettop
#pragma weak lua_getupvalue
#pragma weak lua_insert
#pragma weak lua_iscfunction
#pragma weak lua_isnumber
#pragma weak lua_isstring
#pragma weak lua_newstate
#pragma weak lua_newthread
#pragma weak lua_newuserdata
#pragma weak lua_next
#pragma weak lua_objlen
#pragma weak lua_pcall
#pragma weak lua_pushboolean
#pragma weak lua_pushcclosure
#pragma weak lua_pushinteger
#pragma weak lua_pushlightuserdata
#pragma weak lua_pushlstring
#pragma weak lua_pushnil
#pragma weak lua_pushstring
#pragma weak lua_pushthread
#pragma weak lua_pushvalue
#pragma weak lua_rawequal
#pragma weak lua_rawget
#pragma weak lua_rawgeti
#pragma weak lua_rawset
#pragma weak lua_rawseti
#pragma weak lua_remove
#pragma weak lua_replace
#pragma weak lua_resume
#pragma weak lua_setallocf
#pragma weak lua_setfenv
#pragma weak lua_setfield
#pragma weak lua_sethook
#pragma weak lua_setmetatable
#pragma weak lua_settop
#pragma weak lua_status
#pragma weak lua_toboolean
#pragma weak lua_tocfunction
#pragma weak lua_tointeger
#pragma weak lua_tolstring
#pragma weak lua_topointer
#pragma weak lua_tothread
#pragma weak lua_type
#pragma weak lua_xmove
#pragma weak lua_yield

#endif
