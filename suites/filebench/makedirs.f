# fsarena built-in: makedirs (creates leaf directories until all exist; filebench's defaults).
set $dir=/tmp
set $ndirs=10000
set $meandirwidth=100
set $nthreads=16
set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=0,leafdirs=$ndirs,dirwidth=$meandirwidth

define process name=dirmake,instances=1
{
  thread name=dirmakethread,memsize=1m,instances=$nthreads
  {
    flowop makedir name=mkdir1,filesetname=bigfileset
  }
}
