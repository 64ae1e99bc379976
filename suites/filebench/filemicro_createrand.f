# fsarena built-in: filemicro_createrand (appends of random size with fsyncs until $bytes; filebench's defaults).
set $dir=/tmp
set $bytes=1g
set $iosize=1m
set $iters=10
set $nthreads=1
set $sync=false

define file name=largefile,path=$dir,size=0,prealloc

define process name=filecreater,instances=1
{
  thread name=filecreaterthread,memsize=10m,instances=$nthreads
  {
    flowop appendfilerand name=append-file,filename=largefile,dsync=$sync,iosize=$iosize,iters=$iters
    flowop fsync name=sync
    flowop finishonbytes name=finish,value=$bytes
  }
}
